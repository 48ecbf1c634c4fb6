/**
 * The offset of a 1-based page. A huge page is past the end however far: held at the largest
 * safe offset, it stays an offset the read stores accept, and still past any end.
 */
export const pageOffset = (page: number, pageSize: number): number =>
  Math.min((page - 1) * pageSize, Number.MAX_SAFE_INTEGER);

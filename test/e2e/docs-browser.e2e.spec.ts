import { existsSync } from 'node:fs';
import { Browser, chromium } from 'playwright-core';
import { issueToken, startTestApp, TestAccount, TestApp } from './support/test-app';

/** Debian's chromium, which .ci/run installs; never a browser download. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const withBrowser = existsSync(CHROMIUM) ? describe : describe.skip;
if (!existsSync(CHROMIUM)) {
  process.stderr.write(`docs-browser: skipped, no browser at ${CHROMIUM} (apt-get install chromium)\n`);
}

withBrowser('the docs page in a real browser', () => {
  let subject: TestApp;
  let account: TestAccount;
  let browser: Browser;

  beforeAll(async () => {
    subject = await startTestApp();
    account = await subject.createAccount({ name: 'Browser', age: 40 });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await subject.destroy();
  });

  it('authorizes with a token and runs a merge patch with "Try it out"', async () => {
    const token = await issueToken(subject.url, account);
    const page = await browser.newPage();
    const blocked: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) blocked.push(message.text());
    });
    await page.goto(`${subject.url}/docs`);

    // Authorize: the bearer scheme's value.
    await page.locator('.auth-wrapper .authorize').click();
    const bearer = page.locator('.auth-container').filter({ hasText: 'bearer' }).first();
    await bearer.locator('input').fill(token);
    await bearer.locator('button.modal-btn.auth.authorize').click();
    await bearer.locator('button[aria-label="Remove authorization"]').waitFor();
    await page.locator('.dialog-ux button.close-modal').click();

    // PATCH /users/{userId}: Try it out, with the account's own user and a merge patch.
    const operation = page
      .locator('.opblock-patch')
      .filter({ has: page.locator('[data-path="/users/{userId}"]') });
    await operation.locator('.opblock-summary').click();
    await operation.locator('button.try-out__btn').click();
    await operation.locator('input[placeholder="userId"]').fill(account.userId);
    await operation.locator('textarea.body-param__text').fill('{"age": 41}');
    await operation.locator('button.execute').click();

    const status = operation.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor({ timeout: 20_000 });
    expect((await status.innerText()).trim()).toBe('200');
    const body = await operation
      .locator('.live-responses-table .response-col_description pre')
      .first()
      .innerText();
    expect(JSON.parse(body)).toMatchObject({ id: account.userId, name: 'Browser', age: 41 });
    expect(blocked).toEqual([]);
  }, 60_000);
});

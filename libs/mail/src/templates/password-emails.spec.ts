import { passwordChangedEmail } from './password-changed.email';
import { invitationEmail, passwordResetEmail } from './password-reset.email';

describe('password e-mail templates', () => {
  const hostileAddress = `o'brien+"<b>x</b>"&co@example.com`;

  describe('passwordResetEmail', () => {
    const link = 'https://accounts.example.com/reset-password?token=abc.DEF_123-xyz&lang=en';
    const email = passwordResetEmail({
      to: hostileAddress,
      link,
      expiresAt: new Date('2026-05-01T14:30:59Z'),
    });

    it('puts the link alone on a line of the text part', () => {
      expect(email.subject).toBe('Reset your Chronicle password');
      expect(email.text.split('\n')).toContain(link);
      expect(email.text).toContain(hostileAddress);
      expect(email.text).toContain('expires at 2026-05-01 14:30 UTC');
    });

    it('escapes every value in the HTML part', () => {
      expect(email.html).toContain(
        '<a href="https://accounts.example.com/reset-password?token=abc.DEF_123-xyz&amp;lang=en">',
      );
      expect(email.html).toContain('o&#39;brien+&quot;&lt;b&gt;x&lt;/b&gt;&quot;&amp;co@example.com');
      expect(email.html).not.toContain('<b>');
      expect(email.html).toContain('expires at 2026-05-01 14:30 UTC');
    });
  });

  describe('invitationEmail', () => {
    const link = 'https://accounts.example.com/reset-password?token=abc';
    const email = invitationEmail({ to: hostileAddress, link, expiresAt: new Date('2026-05-08T14:30:00Z') });

    it('invites the address to choose a password through the link, escaped in HTML', () => {
      expect(email.template).toBe('invitation');
      expect(email.subject).toBe('Your Chronicle account');
      expect(email.text.split('\n')).toContain(link);
      expect(email.text).toContain(`account ${hostileAddress} for you`);
      expect(email.text).toContain('expires at 2026-05-08 14:30 UTC');
      expect(email.html).toContain(
        '<a href="https://accounts.example.com/reset-password?token=abc">Choose your password</a>',
      );
      expect(email.html).not.toContain('<b>');
    });
  });

  describe('passwordChangedEmail', () => {
    const email = passwordChangedEmail({ to: hostileAddress, changedAt: new Date('2026-05-01T09:05:00Z') });

    it('names the account and the time in both parts, escaped in HTML', () => {
      expect(email.subject).toBe('Your Chronicle password was changed');
      expect(email.text).toContain(`account ${hostileAddress} was changed at 2026-05-01 09:05 UTC`);
      expect(email.html).toContain('o&#39;brien+&quot;&lt;b&gt;x&lt;/b&gt;&quot;&amp;co@example.com');
      expect(email.html).not.toContain('<b>');
      expect(email.html).toContain('2026-05-01 09:05 UTC');
    });

    it('holds no link, so it can carry nothing secret', () => {
      expect(email.text).not.toMatch(/https?:/);
      expect(email.html).not.toMatch(/href/);
    });
  });
});

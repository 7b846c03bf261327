// The dev identity provider's sign-in page as a person fills it in Chromium (group ops).

import type { Page } from 'playwright-core';

export async function signInOnPage(page: Page, user: string): Promise<void> {
  await page.waitForURL(/\/dev-idp\/login/);
  await page.getByLabel('User name').fill(user);
  await page.getByLabel('Groups (optional, comma-separated)').fill('ops');
  await page.getByRole('button', { name: 'Sign in' }).click();
}

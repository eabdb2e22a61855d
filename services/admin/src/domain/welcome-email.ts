/** The welcome email's text and HTML, rendered from the new user and their organization. */
import type { OrganizationRow } from '../store/organizations.js';
import type { UserRow } from '../store/users.js';

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export function renderWelcomeEmail(input: { user: UserRow; organization: OrganizationRow; publicBaseUrl: string }) {
  const { user, organization, publicBaseUrl } = input;
  const subject = `Welcome to ${organization.name} on the Receivables Platform`;
  const roleLine = user.role === 'admin' ? 'You are an organization admin.' : 'You are a member of the organization.';
  const text = [
    `Hello ${user.name},`,
    '',
    `An account was created for you (${user.email}) in ${organization.name}.`,
    roleLine,
    '',
    `The API is at ${publicBaseUrl} and its reference at ${publicBaseUrl}/docs.`,
    'Ask your organization admin for an access token to get started.',
  ].join('\n');
  const html = `<p>Hello ${escapeHtml(user.name)},</p>
<p>An account was created for you (${escapeHtml(user.email)}) in <strong>${escapeHtml(organization.name)}</strong>. ${roleLine}</p>
<p>The API is at <a href="${escapeHtml(publicBaseUrl)}">${escapeHtml(publicBaseUrl)}</a> and its reference at <a href="${escapeHtml(publicBaseUrl)}/docs">${escapeHtml(publicBaseUrl)}/docs</a>.</p>
<p>Ask your organization admin for an access token to get started.</p>`;
  return { subject, text, html };
}

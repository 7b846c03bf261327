// The one escaping helper of each chat format, through which every text of a Slack message or a
// Teams card goes (./event-formats.ts): what an agent, a requester or Proxmox wrote is shown as text,
// never as a mention, a link or formatting. Neither format has an escape for its formatting
// characters, so those become look-alikes; the approval page shows the exact text. Pure.

/**
 * Teams' Adaptive Card markdown (CommonMark's **bold**, _italic_, [links](url), <autolinks>),
 * its ~strike~ and `code`, and <at> mentions: each character that starts one, as a look-alike.
 */
const TEAMS_LOOKALIKES: Readonly<Record<string, string>> = {
  '*': '\u2217', // ∗ asterisk operator
  _: '\u02cd', // ˍ modifier letter low macron
  '~': '\u223c', // ∼ tilde operator
  '`': '\u02cb', // ˋ modifier letter grave accent
  '[': '\uff3b', // ［ fullwidth left square bracket
  ']': '\uff3d', // ］
  '<': '\u2039', // ‹ single left-pointing angle quotation mark
  '>': '\u203a', // ›
};

/** Every text a Teams card shows goes through here. */
export function teamsText(text: string): string {
  return text.replace(/[*_~`[\]<>]/g, (c) => TEAMS_LOOKALIKES[c]!);
}

/**
 * What Slack's mrkdwn formats, as a look-alike: *bold*, _italic_, ~strike~, `code` and their
 * full-width forms, which Slack formats too. (Slack has no escape for them.)
 */
const SLACK_LOOKALIKES: Readonly<Record<string, string>> = {
  '*': '\u2217', // ∗ asterisk operator
  '\uff0a': '\ufe61', // ＊ → ﹡ small asterisk
  _: '\u02cd', // ˍ modifier letter low macron
  '\uff3f': '\u02cd',
  '~': '\u223c', // ∼ tilde operator
  '\uff5e': '\u223c',
  '`': '\u02cb', // ˋ modifier letter grave accent
  '\uff40': '\u02cb',
};

/**
 * Every text a Slack message shows goes through here: &, < and > as the entities Slack's docs
 * ask for (no <!channel>, <@U123>, <#C1> or <https://…|Approve> survives), the formatting
 * characters as look-alikes, and a soft hyphen before a > (or ＞) that starts a line, which
 * would quote it.
 */
export function slackText(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/[*\uff0a_\uff3f~\uff5e`\uff40]/g, (c) => SLACK_LOOKALIKES[c]!)
    .replace(/^(\s*)(&gt;|\uff1e)/gm, '$1\u00ad$2');
}

/** Cut to `max`, never inside an entity (a cut "&am" would be a bare &). */
export function clipEscaped(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1).replace(/&[a-z]*$/, '')}…` : text;
}

/**
 * Auto-replies (RFC 3834): the `Auto-Submitted` header other than `no`, `X-Autoreply` /
 * `X-Autorespond`, `Precedence: auto_reply`, and out-of-office phrasing in English, German, French,
 * Spanish and Dutch in the subject or the sender's own words. An auto-reply never counts as a
 * customer answer. Pure.
 */
import type { ParsedInboundMessage } from '../../../domain-types/inbox.js';
import { fold } from './text.js';

export interface AutoReplyReading {
  confidence: number;
  reasons: string[];
  /** `Auto-Submitted: auto-generated` or bulk precedence: automatic, but not necessarily a reply (an ERP's advice can carry it) */
  generatedOnly: boolean;
}

const OOO_SUBJECT =
  /^\s*(\[?(automatic reply|auto(matic)?[- ]?(reply|response)|autoreply|auto-response|out of (the )?office|ooo|abwesenheit(snotiz)?|automatische antwort|abwesend|reponse automatique|absence|absent(e)?|message d'absence|respuesta automatica|fuera de la oficina|ausente|automatisch antwoord|afwezig(heid)?|niet aanwezig|out of office reply)\b)/;
/** First-person statements of absence and automatic-reply notices: one is enough. */
const OOO_STRONG: RegExp[] = [
  /\b(i am|i'm|i will be)\s+(currently\s+)?(out of (the )?office|away from (the )?office|on (annual |parental |sick )?leave|on (holiday|vacation)|out until|away until)/,
  /\bthis is an automat(ic|ed)(ally generated)? (reply|response)/,
  /\b(ich bin|bin ich)\b.{0,60}\b(nicht im (buro|haus)|abwesend|im urlaub|ausser haus|nicht erreichbar|auf dienstreise)/,
  /\bdies ist eine automatische (antwort|abwesenheitsnotiz)/,
  /\b(je suis|je serai)\s+(actuellement\s+)?(absente?|en conges?|en vacances|hors du bureau|en deplacement)/,
  /\bceci est une reponse automatique/,
  /\b(estoy|estare)\s+(actualmente\s+)?(fuera de la oficina|de vacaciones|ausente)/,
  /\besta es una respuesta automatica\b/,
  /\b(ik ben|ben ik)\b.{0,60}\b(afwezig|niet op kantoor|met vakantie|niet bereikbaar|op vakantie)/,
  /\bdit is een automatisch (antwoord|gegenereerd antwoord)/,
];
/** Wording that goes with an absence but also appears in ordinary mail: two are needed. */
const OOO_WEAK: RegExp[] = [
  /\bout of (the )?office\b/,
  /\b(i will|i'll) (be back|return|respond|reply)\b.{0,60}\b(on|when|upon|after)\b/,
  /\bback in the office\b/,
  /\b(limited|no) access to (my )?e-?mail/,
  /\bduring my absence\b|\bfor urgent matters\b/,
  /\b(nicht im buro|ausser haus|im urlaub|abwesenheit)\b/,
  /\b(wieder (im buro|erreichbar|zuruck|verfugbar))\b/,
  /\b(keinen|eingeschrankten) zugriff auf (meine )?e-?mails?/,
  /\bin dringenden fallen\b/,
  /\bihre (e-?mail|nachricht) wird nicht weitergeleitet\b/,
  /\b(absente? du bureau|hors du bureau|en conges?)\b/,
  /\bje serai de retour\b|\bde retour (le|au bureau)\b|\ba mon retour\b/,
  /\bacces (limite|restreint) a (mes )?e-?mails?/,
  /\ben cas d'urgence\b/,
  /\bfuera de la oficina\b|\bde vacaciones\b/,
  /\b(estare de vuelta|regresare el|volvere el|de regreso el|a mi regreso)\b/,
  /\bacceso limitado al correo\b/,
  /\ben caso de urgencia\b/,
  /\b(afwezig|niet op kantoor|met vakantie|op vakantie)\b/,
  /\b(ben ik|ik ben) (weer|vanaf) .{0,40}(aanwezig|bereikbaar|terug)|\bweer terug op\b/,
  /\bbeperkte? toegang tot (mijn )?e-?mail/,
  /\b(in dringende gevallen|voor dringende zaken)\b/,
];

const AUTO_REPLY_HEADERS: [string, string][] = [
  ['x-autoreply', 'X-Autoreply'],
  ['x-autorespond', 'X-Autorespond'],
  ['x-autoresponder', 'X-Autoresponder'],
  ['x-auto-reply', 'X-Auto-Reply'],
];

/** Automated notices that are no reply (an ERP's advice, a newsletter): they only make an automatic message more likely. */
const AUTOMATED_NOTICE =
  /\b(this is an automat(ic|ed)(ally generated)? (message|e-?mail|notification)|do not reply|please do not respond|nicht auf diese (e-?mail|nachricht) antworten|automatisch (erstellt|generiert)e?|ne pas repondre|no responda|niet beantwoorden|unsubscribe|abmelden|se desabonner|afmelden)\b/;

/**
 * The message's auto-reply signals, or null when none. A reply signal (Auto-Submitted:
 * auto-replied, X-Autoreply, Precedence: auto_reply, an out-of-office subject or wording) makes it an
 * auto-reply; only "generated" signals (Auto-Submitted: auto-generated, bulk/list precedence, "do not
 * reply" notices) leave the decision to the content (`generatedOnly`).
 */
export function readAutoReply(msg: ParsedInboundMessage, own: string): AutoReplyReading | null {
  const reasons: string[] = [];
  let reply = 0;
  let generated = 0;
  const autoSubmitted = (msg.headers['auto-submitted'] ?? '').trim().toLowerCase();
  if (autoSubmitted && !autoSubmitted.startsWith('no')) {
    if (autoSubmitted.startsWith('auto-replied')) reply = Math.max(reply, 97);
    else generated = Math.max(generated, 85);
    reasons.push(`Auto-Submitted: ${autoSubmitted}`);
  }
  for (const [name, display] of AUTO_REPLY_HEADERS) {
    if (msg.headers[name] !== undefined) {
      reply = Math.max(reply, 95);
      reasons.push(`${display}: ${msg.headers[name]}`);
    }
  }
  const precedence = (msg.headers.precedence ?? '').trim().toLowerCase();
  if (precedence === 'auto_reply') {
    reply = Math.max(reply, 95);
    reasons.push('Precedence: auto_reply');
  } else if (['bulk', 'junk', 'list'].includes(precedence)) {
    generated = Math.max(generated, 45);
    reasons.push(`Precedence: ${precedence}`);
  }
  const subject = fold(msg.subject ?? '');
  if (OOO_SUBJECT.test(subject)) {
    reply = Math.max(reply, 88);
    reasons.push(`Subject reads as an automatic reply: "${msg.subject}"`);
  }
  const body = fold(own.slice(0, 4000));
  const strong = OOO_STRONG.filter((p) => p.test(body)).length;
  const weak = OOO_WEAK.filter((p) => p.test(body)).length;
  if (strong > 0 || weak >= 2 || (weak === 1 && reply > 0)) {
    const phraseScore = strong > 0 ? 75 + Math.min(2, strong + weak - 1) * 5 : weak >= 2 ? 70 : 0;
    reply = Math.max(reply, phraseScore) + (reply > 0 ? 5 : 0);
    reasons.push(`Out-of-office wording in the text (${strong + weak} phrase${strong + weak > 1 ? 's' : ''})`);
  }
  if (AUTOMATED_NOTICE.test(body)) {
    generated = Math.max(generated, 40) + (generated > 0 ? 5 : 0);
    reasons.push('The text says it is automated');
  }
  if (reply > 0) return { confidence: Math.min(99, reply + (generated > 0 ? 3 : 0)), reasons, generatedOnly: false };
  if (generated > 0) return { confidence: Math.min(95, generated), reasons, generatedOnly: true };
  return null;
}

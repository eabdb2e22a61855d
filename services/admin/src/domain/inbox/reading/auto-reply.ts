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
const OOO_PHRASES: RegExp[] = [
  // English
  /\b(i am|i'm|i will be)\s+(currently\s+)?(out of (the )?office|away|on (annual |parental |sick )?leave|on (holiday|vacation)|out until|travell?ing)/,
  /\bout of (the )?office\b/,
  /\b(i will|i'll) (be back|return|respond|reply)\b.{0,60}\b(on|when|upon|after)\b/,
  /\bback in the office\b/,
  /\b(limited|no) access to (my )?e-?mail/,
  /\bthis is an automat(ic|ed)(ally generated)? (reply|response|message|e-?mail)/,
  /\bduring my absence\b/,
  // German
  /\b(ich bin|bin ich)\b.{0,60}\b(nicht im (buro|haus)|abwesend|im urlaub|ausser haus|nicht erreichbar|auf dienstreise)/,
  /\b(nicht im buro|ausser haus|im urlaub|abwesenheit)\b/,
  /\b(wieder (im buro|erreichbar|da|zuruck|verfugbar))\b/,
  /\b(keinen|eingeschrankten) zugriff auf (meine )?e-?mails?/,
  /\bdies ist eine automatische (antwort|nachricht|abwesenheitsnotiz)/,
  /\bin dringenden fallen wenden sie sich\b/,
  /\bihre (e-?mail|nachricht) wird nicht weitergeleitet\b/,
  // French
  /\b(je suis|je serai)\s+(actuellement\s+)?(absente?|en conges?|en vacances|hors du bureau|en deplacement)/,
  /\b(absente? du bureau|hors du bureau|en conges?)\b/,
  /\bje serai de retour\b|\bde retour (le|au bureau)\b/,
  /\bacces (limite|restreint) a (mes )?e-?mails?/,
  /\bceci est (une reponse|un message) automatique/,
  /\ben cas d'urgence\b/,
  // Spanish
  /\b(estoy|estare)\s+(actualmente\s+)?(fuera de la oficina|de vacaciones|ausente|fuera)/,
  /\bfuera de la oficina\b|\bde vacaciones\b/,
  /\b(estare de vuelta|regresare el|volvere el|de regreso el)\b/,
  /\bacceso limitado al correo\b/,
  /\besta es una respuesta automatica\b/,
  /\ben caso de urgencia\b/,
  // Dutch
  /\b(ik ben|ben ik)\b.{0,60}\b(afwezig|niet op kantoor|met vakantie|niet bereikbaar|op vakantie)/,
  /\b(afwezig|niet op kantoor|met vakantie|op vakantie)\b/,
  /\b(ben ik|ik ben) (weer|vanaf) .{0,40}(aanwezig|bereikbaar|terug)|\bweer terug op\b/,
  /\bbeperkte? toegang tot (mijn )?e-?mail/,
  /\bdit is een automatisch (antwoord|bericht|gegenereerd)/,
  /\bin dringende gevallen\b/,
];

const AUTO_REPLY_HEADERS: [string, string][] = [
  ['x-autoreply', 'X-Autoreply'],
  ['x-autorespond', 'X-Autorespond'],
  ['x-autoresponder', 'X-Autoresponder'],
  ['x-auto-reply', 'X-Auto-Reply'],
];

/** The message's auto-reply signals, or null when none. */
export function readAutoReply(msg: ParsedInboundMessage, own: string): AutoReplyReading | null {
  const reasons: string[] = [];
  let score = 0;
  let generatedOnly = false;
  const autoSubmitted = (msg.headers['auto-submitted'] ?? '').trim().toLowerCase();
  if (autoSubmitted && !autoSubmitted.startsWith('no')) {
    score = Math.max(score, autoSubmitted.startsWith('auto-replied') ? 97 : 90);
    generatedOnly = !autoSubmitted.startsWith('auto-replied');
    reasons.push(`Auto-Submitted: ${autoSubmitted}`);
  }
  for (const [name, display] of AUTO_REPLY_HEADERS) {
    if (msg.headers[name] !== undefined) {
      score = Math.max(score, 95);
      generatedOnly = false;
      reasons.push(`${display}: ${msg.headers[name]}`);
    }
  }
  const precedence = (msg.headers.precedence ?? '').trim().toLowerCase();
  if (precedence === 'auto_reply') {
    score = Math.max(score, 95);
    generatedOnly = false;
    reasons.push('Precedence: auto_reply');
  } else if (['bulk', 'junk', 'list'].includes(precedence)) {
    score = Math.max(score, 45);
    reasons.push(`Precedence: ${precedence}`);
  }
  const subject = fold(msg.subject ?? '');
  if (OOO_SUBJECT.test(subject)) {
    score = Math.max(score, 88);
    generatedOnly = false;
    reasons.push(`Subject reads as an automatic reply: "${msg.subject}"`);
  }
  const body = fold(own.slice(0, 4000));
  const phrases = OOO_PHRASES.filter((p) => p.test(body));
  if (phrases.length > 0) {
    const phraseScore = phrases.length >= 2 ? 85 : 62;
    if (phraseScore > score) generatedOnly = false;
    score = Math.max(score, phraseScore) + (score > 0 ? 5 : 0);
    reasons.push(`Out-of-office wording in the text (${phrases.length} phrase${phrases.length > 1 ? 's' : ''})`);
  }
  if (score === 0) return null;
  return { confidence: Math.min(99, score), reasons, generatedOnly };
}

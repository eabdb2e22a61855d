/**
 * Month and weekday names, and small number words, in English, German, French, Spanish and Dutch
 * (folded: lower case, no diacritics), for the date and amount readers. Pure data.
 */

/** folded month name or abbreviation → month number (1..12) */
export const MONTHS: Record<string, number> = {};
const MONTH_NAMES: string[][] = [
  ['january', 'jan', 'januar', 'janner', 'janvier', 'janv', 'enero', 'ene', 'januari'],
  ['february', 'feb', 'februar', 'feber', 'fevrier', 'fevr', 'fev', 'febrero', 'februari'],
  ['march', 'mar', 'marz', 'maerz', 'mrz', 'mars', 'marzo', 'maart', 'mrt'],
  ['april', 'apr', 'avril', 'avr', 'abril', 'abr'],
  ['may', 'mai', 'mayo', 'mei', 'may'],
  ['june', 'jun', 'juni', 'juin', 'junio'],
  ['july', 'jul', 'juli', 'juillet', 'juil', 'julio'],
  ['august', 'aug', 'aout', 'agosto', 'ago', 'augustus'],
  ['september', 'sep', 'sept', 'septembre', 'septiembre', 'setiembre'],
  ['october', 'oct', 'oktober', 'okt', 'octobre', 'octubre'],
  ['november', 'nov', 'novembre', 'noviembre'],
  ['december', 'dec', 'dezember', 'dez', 'decembre', 'diciembre', 'dic'],
];
MONTH_NAMES.forEach((names, i) => {
  for (const n of names) MONTHS[n] = i + 1;
});
export const MONTH_PATTERN = Object.keys(MONTHS)
  .sort((a, b) => b.length - a.length)
  .join('|');

/** folded weekday name → ISO weekday (1 = Monday … 7 = Sunday) */
export const WEEKDAYS: Record<string, number> = {};
const WEEKDAY_NAMES: string[][] = [
  ['monday', 'montag', 'lundi', 'lunes', 'maandag'],
  ['tuesday', 'dienstag', 'mardi', 'martes', 'dinsdag'],
  ['wednesday', 'mittwoch', 'mercredi', 'miercoles', 'woensdag'],
  ['thursday', 'donnerstag', 'jeudi', 'jueves', 'donderdag'],
  ['friday', 'freitag', 'vendredi', 'viernes', 'vrijdag'],
  ['saturday', 'samstag', 'sonnabend', 'samedi', 'sabado', 'zaterdag'],
  ['sunday', 'sonntag', 'dimanche', 'domingo', 'zondag'],
];
WEEKDAY_NAMES.forEach((names, i) => {
  for (const n of names) WEEKDAYS[n] = i + 1;
});
export const WEEKDAY_PATTERN = Object.keys(WEEKDAYS)
  .sort((a, b) => b.length - a.length)
  .join('|');

/** folded small number words → value, for "in two weeks", "dans trois jours" */
export const NUMBER_WORDS: Record<string, number> = {
  one: 1, a: 1, an: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, ten: 10, fourteen: 14,
  ein: 1, einer: 1, eine: 1, zwei: 2, drei: 3, vier: 4, funf: 5, sechs: 6, sieben: 7, acht: 8, zehn: 10, vierzehn: 14,
  un: 1, une: 1, deux: 2, trois: 3, quatre: 4, cinq: 5, sept: 7, huit: 8, dix: 10, quinze: 15,
  uno: 1, dos: 2, tres: 3, cuatro: 4, cinco: 5, seis: 6, siete: 7, ocho: 8, diez: 10, quince: 15,
  een: 1, twee: 2, drie: 3, vijf: 5, zes: 6, zeven: 7, tien: 10, veertien: 14,
};
export const NUMBER_WORD_PATTERN = Object.keys(NUMBER_WORDS)
  .sort((a, b) => b.length - a.length)
  .join('|');

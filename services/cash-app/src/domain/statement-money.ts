/** How a statement writes an amount: the currency's minor units, never rounding a bank's extra digits away. */
import { currencyMinorUnits, Money } from '@rp/platform';

/** Amount as a decimal string with the currency's minor units (EUR 2, JPY 0, BHD 3). */
export function money(value: string | null, currency: string | null): string | null {
  if (value == null) return null;
  const ccy = currency?.trim();
  let places = 2;
  try {
    if (ccy) places = currencyMinorUnits(ccy);
  } catch {
    places = 2;
  }
  const m = new Money(value);
  // Keep digits the currency does not have rather than rounding a bank's amount away.
  return m.decimalPlaces() > places ? m.toFixed(m.decimalPlaces()) : m.toFixed(places);
}

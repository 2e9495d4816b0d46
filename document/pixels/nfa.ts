/**
 * A-contrario false-alarm control (Desolneux, Moisan and Morel; used by ZERO, Nikoukhah et al. 2019): an
 * event is reported only when its number of false alarms, NFA = (number of tests) × P(an event at least
 * this extreme under the background model), is below 1 — so on a page that matches the background model,
 * less than one false detection is expected whatever its size. Everything in log10.
 */

const LN10 = Math.LN10;

/** ln Γ(x) (Lanczos, g = 7). */
export function lnGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x);
  const g = 7;
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  const z = x - 1;
  let a = c[0]!;
  const t = z + g + 0.5;
  for (let i = 1; i < g + 2; i++) a += c[i]! / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** log10 of the binomial tail P(X ≥ k), X ~ B(n, p). */
export function logBinomialTail(n: number, k: number, p: number): number {
  if (k <= 0) return 0;
  if (k > n) return Number.NEGATIVE_INFINITY;
  if (p <= 0) return Number.NEGATIVE_INFINITY;
  if (p >= 1) return 0;
  const lnp = Math.log(p);
  const lnq = Math.log1p(-p);
  const lnC = (i: number) => lnGamma(n + 1) - lnGamma(i + 1) - lnGamma(n - i + 1);
  // Sum the terms from k upwards in log space (log-sum-exp), stopping when they no longer matter.
  let maxTerm = Number.NEGATIVE_INFINITY;
  const terms: number[] = [];
  for (let i = k; i <= n; i++) {
    const t = lnC(i) + i * lnp + (n - i) * lnq;
    terms.push(t);
    if (t > maxTerm) maxTerm = t;
    if (t < maxTerm - 40 && i > k + 5) break;
  }
  let s = 0;
  for (const t of terms) s += Math.exp(t - maxTerm);
  return Math.min(0, (maxTerm + Math.log(s)) / LN10);
}

/** log10 NFA = log10(tests) + log10 P(X ≥ k). */
export function logNfa(tests: number, n: number, k: number, p: number): number {
  return Math.log10(Math.max(1, tests)) + logBinomialTail(n, k, p);
}

/** log10 of the two-sided Gaussian tail P(|Z| ≥ z). */
export function logGaussTail(z: number): number {
  const a = Math.abs(z);
  if (a < 5) {
    // erfc by Abramowitz-Stegun 7.1.26 (enough for a threshold).
    const t = 1 / (1 + 0.3275911 * (a / Math.SQRT2));
    const y =
      t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    return Math.log10(Math.max(1e-300, y * Math.exp(-(a * a) / 2)));
  }
  // Asymptotic: 2φ(a)/a.
  return (-(a * a) / 2 - Math.log(a) + Math.log(2 / Math.sqrt(2 * Math.PI))) / LN10;
}

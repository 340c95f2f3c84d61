// WebKitGTK takes navigator.language from the process locale, and under a C or POSIX locale (a
// minimal Debian's default, C.UTF-8) reports "C", which is no BCP 47 tag. uPlot builds an
// Intl.NumberFormat from navigator.language as it loads, Intl throws a RangeError, and the whole
// bundle stopped there: a blank console. This module runs before every other one and puts the
// first valid tag of navigator.languages (or en-US) in its place.
function canonical(tag) {
  try {
    return Intl.getCanonicalLocales(tag)[0] || null;
  } catch {
    return null;
  }
}

if (!canonical(navigator.language)) {
  const tag = (navigator.languages || []).map(canonical).find(Boolean) || 'en-US';
  Object.defineProperty(navigator, 'language', { value: tag, configurable: true });
}

"""heston32: heston32's calibration of the Heston model by differential evolution, in numpy.

Every candidate's objective is computed at once (arrays over candidates, integration points and maturities),
in float32 like the program. Complex numbers are pairs of float32 arrays with the program's formulas (its
square root differs from numpy's principal one on the negative real axis), and f32.min and f32.max ignore a
NaN operand, as fmin and fmax do. The optimiser's random draws are integer arithmetic, so the reference
follows the program's search exactly as long as no comparison of two objective values is decided by rounding.
"""

import datetime

import numpy as np

from . import Dataset

TODAY = 20170126
# The parameters are hundredths to units: futhark test's 0.002 absolute tolerance would hide a wrong search.
TOLERANCE = dict(rtol=2e-3, atol=1e-6)

# The long searches are timed, not checked: see the program's header.
DATASETS = (
    Dataset("ci", dict(quotes=60, maturities=5, np_=6, max_global=30, points=20), ("ci",)),
    Dataset("ci-ten", dict(quotes=40, maturities=3, np_=5, max_global=20, points=10), ("ci",)),
    Dataset("train-1162", dict(quotes=1162, maturities=17), ("train",), checked=False),
    Dataset("train-9000", dict(quotes=9000, maturities=90), ("train",), checked=False),
    Dataset("1062", dict(quotes=1062, maturities=17), ("paper", "notune"), checked=False),
    Dataset("10000", dict(quotes=10000, maturities=100), ("paper", "notune"), checked=False),
)

F = np.float32
LOWER = np.array([1e-6, 1e-6, -1, 1e-4, 1e-4], F)
UPPER = np.array([1, 1, 0, 4, 2], F)
MODULUS = 2147483647

GAUSS_LAGUERRE = {
    10: ([0.1377934705404924, 0.7294545495031708, 1.8083429017403143, 3.4014336978548352, 5.55249614006424,
          8.330152746763265, 11.843785837901915, 16.279257831376615, 21.99658581198136, 29.920697012273774],
         [0.35400973860699803, 0.8319023010435621, 1.3302885617494675, 1.8630639031111378, 2.450255558073156,
          3.122764155173507, 3.9341526954948387, 4.992414872215118, 6.572202485111805, 9.784695840367801]),
    20: ([0.07053988969198874, 0.3721268180016133, 0.9165821024832457, 1.7073065310281683, 2.749199255315394,
          4.04892531380806, 5.615174970938837, 7.459017454225468, 9.59439286548323, 12.03880256060886,
          14.814293416061962, 17.94889554312255, 21.478788273773705, 25.45170264418549, 29.932554890200286,
          35.01343396898007, 40.83305723940129, 47.619993970772064, 55.81079576805181, 66.52441652386588],
         [0.18108006241898922, 0.4225567678786019, 0.6669095467014556, 0.9153523727812171, 1.1695397072804468,
          1.4313549860432604, 1.702981136708622, 1.9870159022074663, 2.286635720019974, 2.6058349131697116,
          2.949783261906035, 3.3253969236002114, 3.742254738382389, 4.214237825042351, 4.762516191899977,
          5.421727418640771, 6.254011265769629, 7.38731454069754, 9.151328572719786, 12.893388638453542]),
}


def inputs(rng: np.random.Generator, quotes: int, maturities: int, np_: int = 40, max_global: int = 2000,
           points: int = 20):
    """Quotes sorted by maturity: distinct maturities up to five years out, strikes around the spot (1), and
    implied volatilities on a skewed smile that flattens with maturity, with a little noise."""
    today = datetime.date(TODAY // 10000, TODAY // 100 % 100, TODAY % 100)
    offsets = np.sort(rng.choice(np.arange(7, 5 * 365), maturities, replace=False))
    per_maturity = 1 + rng.multinomial(quotes - maturities, np.full(maturities, 1 / maturities))
    days = np.repeat(offsets, per_maturity)
    dates = [today + datetime.timedelta(days=int(d)) for d in days]
    maturity = np.array([d.year * 10000 + d.month * 100 + d.day for d in dates], np.int32)
    strike = rng.uniform(0.6, 1.5, quotes)
    years = days / 365
    log_k = np.log(strike)
    vol = (0.18 + (0.08 * log_k * log_k - 0.1 * log_k) / np.sqrt(years + 0.1)) * (1 + rng.normal(0, 0.01, quotes))
    return (np.int32(max_global), np.int32(points), np.int32(np_), np.int32(TODAY), maturity,
            strike.astype(np.float64), np.clip(vol, 0.05, 1.0).astype(np.float64))


def days_of_date(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.int64)
    return np.array([datetime.date(v // 10000, v // 100 % 100, v % 100).toordinal() for v in x.ravel()],
                    np.int64).reshape(x.shape)


# --- complex numbers as (re, im) pairs, with the program's formulas -----------------------------------------

def cmul(x, y):
    return x[0] * y[0] - x[1] * y[1], x[0] * y[1] + x[1] * y[0]


def cdiv(x, y):
    m = y[0] * y[0] + y[1] * y[1]
    return (x[0] * y[0] + x[1] * y[1]) / m, (x[1] * y[0] - x[0] * y[1]) / m


def cadd(x, y):
    return x[0] + y[0], x[1] + y[1]


def csub(x, y):
    return x[0] - y[0], x[1] - y[1]


def cexp(x):
    e = np.exp(x[0])
    return e * np.cos(x[1]), e * np.sin(x[1])


def clog(x):
    return np.log(np.sqrt(x[0] * x[0] + x[1] * x[1])), np.arctan2(x[1], x[0])


def csqrt(x):
    m = np.sqrt(x[0] * x[0] + x[1] * x[1])
    return np.sqrt((x[0] + m) / F(2)), np.sign(x[1]) * np.sqrt((m - x[0]) / F(2))


def real(a):
    a = np.asarray(a, F)
    return a, np.zeros_like(a)


def psi_h(p, t, xi):
    """The characteristic function; p is five arrays (broadcasting against t and xi)."""
    v0, theta, rho, kappa, eta = p
    eta2 = eta * eta
    coeff1 = real(kappa * theta / eta2)
    coeff2 = real(v0 / eta2)
    d0 = csub(real(kappa), cmul((np.zeros_like(rho), rho * eta), xi))
    i_plus_xi = (xi[0], xi[1] + F(1))
    d = csqrt(cadd(cmul(d0, d0), cmul(real(eta2), cmul(xi, i_plus_xi))))
    a_minus = csub(d0, d)
    g = cdiv(a_minus, cadd(d0, d))
    e = cexp(cmul(real(-t), d))
    one_minus_ge = csub(real(np.ones_like(e[0])), cmul(g, e))
    one_minus_g = csub(real(np.ones_like(g[0])), g)
    log_term = clog(cdiv(one_minus_ge, one_minus_g))
    first = cmul(coeff1, csub(cmul(a_minus, real(t)), cmul(real(np.full_like(t, 2)), log_term)))
    second = cdiv(cmul(coeff2, cmul(a_minus, csub(real(np.ones_like(e[0])), e))), one_minus_ge)
    return cexp(cadd(first, second))


def pnorm(x):
    def erf(u):
        t = F(1) / (F(1) + F(0.3275911) * u)
        poly = F(0.254829592) + t * (F(-0.284496736) + t * (F(1.421413741) + t * (F(-1.453152027)
                                                                                     + t * F(1.061405429))))
        return F(1) - t * poly * np.exp(-(u * u))
    u = x / np.sqrt(F(2))
    return F(0.5) * (F(1) + np.where(u < 0, -erf(-u), erf(u)))


def bs_call(strike, t, vol):
    sqrt_t = np.sqrt(t)
    d1 = (np.log(F(1) / strike) + F(0.5) * vol * vol * t) / (vol * sqrt_t)
    d2 = d1 - vol * sqrt_t
    price = pnorm(d1) - strike * pnorm(d2)
    vega = sqrt_t * np.exp(F(-0.5) * d1 * d1) / np.sqrt(F(2) * F(np.pi))
    return price, np.fmax(F(0.1), vega)


class Objective:
    """The calibration's objective for arrays of candidates [c][5]."""

    def __init__(self, points, maturity, strike, quote, today):
        days = days_of_date(maturity) - days_of_date(np.int64(today))
        self.n = len(days)
        starts = np.ones(self.n, bool)
        starts[1:] = days[1:] != days[:-1]
        self.quote_mat = np.cumsum(starts) - 1
        self.mat_t = (days[starts].astype(F) / F(365)).astype(F)
        self.strike = strike.astype(F)
        self.price, self.vega = bs_call(self.strike, days.astype(F) / F(365), quote.astype(F))
        self.gl_x, self.gl_w = (np.array(v, np.float64).astype(F) for v in GAUSS_LAGUERRE[points])

    def __call__(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return self._objective(x)

    def _objective(self, x):
        p = [x[:, k, None] for k in range(5)]                             # [c][1] against maturities
        v0, theta, _, kappa, _ = p
        t = self.mat_t[None, :]
        variance = theta + (v0 - theta) * (F(1) - np.exp(F(0) - kappa * t)) / (kappa * t)   # [c][m]
        # coefficients [c][j][m]
        xj = self.gl_x[None, :, None]
        wj = self.gl_w[None, :, None]
        tt, var = t[:, None, :], variance[:, None, :]
        pp = [v[:, :, None] for v in p]
        xi = (np.broadcast_to(xj, (x.shape[0], len(self.gl_x), len(self.mat_t))).astype(F),
              np.full((x.shape[0], len(self.gl_x), len(self.mat_t)), F(-1)))
        i_plus_xi = (xi[0], xi[1] + F(1))
        bs = cexp(cmul(real(F(-0.5) * tt * var), cmul(xi, i_plus_xi)))
        c = cdiv(csub(bs, psi_h(pp, tt, xi)), cmul(real(xj), xi))
        cr, ci = wj * c[0], wj * c[1]
        # per quote: the sum over points, in order
        log_k = np.log(self.strike)
        integral = np.zeros((x.shape[0], self.n), F)
        for j in range(len(self.gl_x)):
            phase = F(0) - self.gl_x[j] * log_k
            integral = integral + (cr[:, j, self.quote_mat] * np.cos(phase) - ci[:, j, self.quote_mat] * np.sin(phase))
        tq = self.mat_t[self.quote_mat]
        s = np.sqrt(variance[:, self.quote_mat] * tq)
        d1 = (F(0) - log_k) / s + F(0.5) * s
        control = pnorm(d1) - self.strike * pnorm(d1 - s)
        model = np.fmax(np.fmax(F(0), F(1) - self.strike), np.fmin(F(1), integral / F(np.pi) + control))
        diff = (self.price - model) / self.vega
        distance = np.sum((diff * diff).astype(np.float64), axis=1).astype(F)
        return np.where(np.isnan(distance), F(np.inf), distance)


# --- the optimiser --------------------------------------------------------------------------------------------

def next_state(s: int) -> int:
    return s * 48271 % MODULUS


def uniform(lo, hi, s):
    s = next_state(s)
    return s, F(lo) + (F(hi) - F(lo)) * (F(s - 1) / F(MODULUS - 1))


def uniform_int(n, s):
    s = next_state(s)
    return s, s % n


def hash32(x: int) -> int:
    x = (((x >> 16) ^ x) * 0x45d9f3b) & 0xFFFFFFFF
    x = (((x >> 16) ^ x) * 0x45d9f3b) & 0xFFFFFFFF
    return (x >> 16) ^ x


def split(n: int, s: int) -> list[int]:
    return [((s ^ hash32(i)) % MODULUS) or 1 for i in range(n)]


def best_of(values: np.ndarray, start=(np.inf, 0)):
    """The smallest value and its index (the lowest index among equals), from a starting pair."""
    best, idx = F(start[0]), start[1]
    for i, v in enumerate(values):
        if v < best or (v == best and i < idx):
            best, idx = v, i
    return best, idx


def mutate(weight, best, x, s, i):
    n = len(x)
    s, a = uniform_int(n, s)
    while a == i:
        s, a = uniform_int(n, s)
    s, b = uniform_int(n, s)
    while b == i or b == a:
        s, b = uniform_int(n, s)
    s, c = uniform_int(n, s)
    while c in (i, a, b):
        s, c = uniform_int(n, s)
    s, r = uniform(0, 1, s)
    x_r1 = x[best] if r <= F(0.5) else x[a]
    s, j0 = uniform_int(5, s)
    rs = []
    for _ in range(5):
        s, u = uniform(0, 1, s)
        rs.append(u)
    aux = x_r1 + F(weight) * (x[b] - x[c])
    take = (np.arange(5) == j0) | ((np.array(rs, F) <= F(0.9)) & (LOWER <= aux) & (aux <= UPPER))
    return s, np.where(take, aux, x[i]).astype(F)


def reference(max_global, points, np_, today, maturity, strike, quote):
    objective = Objective(int(points), maturity, strike, quote, int(today))
    np_ = int(np_)
    states, x = [], []
    for s in split(np_, 291):
        row = []
        for j in range(5):
            s, u = uniform(0, 1, s)
            row.append(LOWER[j] + (UPPER[j] - LOWER[j]) * u)
        states.append(s)
        x.append(row)
    x = np.array(x, F)
    fx = objective(x)
    fx0, best = best_of(fx)
    s, calls = states[0], np_
    while calls < int(max_global) and fx0 > 0:
        s, weight = uniform(0.5, 1, s)
        mutated = [mutate(weight, best, x, si, i) for i, si in enumerate(split(np_, s))]
        v = np.array([m[1] for m in mutated], F)
        f_v = objective(v)
        x = np.where((f_v < fx)[:, None], v, x)
        fx = np.fmin(f_v, fx)
        fx0, best = best_of(f_v, (fx0, best))
        s, calls = mutated[0][0], calls + np_
    p = x[best]
    with np.errstate(all="ignore"):
        rmse = np.sqrt(objective(p[None, :])[0] * (F(10000) / F(objective.n)))
    return (F(rmse), np.int32(calls), p[0], p[1], p[3], p[4], p[2])

"""optionpricing: FinPar's OptionPricing (Monte Carlo pricing over Sobol paths), in numpy.

Path n (1-based) takes the Sobol point of index n (gray-code formulation: the XOR of the direction vectors
whose bit is set in gray(n)), maps it to normal deviates with Wichura's AS241 rational approximation, turns
them into Brownian increments with a Brownian bridge over the dates, correlates the underlyings (a Cholesky
factor), builds Black-Scholes prices and pays the contract's payoff. The price is the mean over paths, per
market model. The per-path arithmetic is float32 as in the program; the sum over paths is float64.
"""

import functools

import numpy as np

from . import Dataset

SOBOL_BITS = 30
# The underlyings' start values: FinPar's (the payoffs of contracts 2 and 3 are written against them).
STARTS = np.array([3758.05, 11840.0, 1200.0], np.float32)

DATASETS = (
    Dataset("ci-c1", dict(contract=1, paths=700, dates=1, models=2), ("ci",)),
    Dataset("ci-c2", dict(contract=2, paths=64, dates=5, models=2), ("ci",)),  # the interpreter is slow here
    Dataset("ci-c3", dict(contract=3, paths=3, dates=367, models=2), ("ci",)),
    Dataset("D1", dict(contract=2, paths=1048576, dates=5, models=1), ("paper", "notune")),
    Dataset("D2", dict(contract=3, paths=500, dates=367, models=1), ("paper", "notune")),
    Dataset("train-D1", dict(contract=2, paths=262144, dates=5, models=1), ("train",)),
    Dataset("train-D2", dict(contract=3, paths=250, dates=367, models=1), ("train",)),
)

UNDERLYINGS = {1: 1, 2: 3, 3: 3}
DISCOUNTS = {1: 1, 2: 5, 3: 2}


# --- Sobol direction vectors --------------------------------------------------------------------------------

def _polymulmod(a: int, b: int, f: int, deg: int) -> int:
    """a * b modulo f over GF(2) (polynomials as bit masks)."""
    out = 0
    while b:
        if b & 1:
            out ^= a
        b >>= 1
        a <<= 1
        if a >> deg & 1:
            a ^= f
    return out


def _is_primitive(f: int, deg: int) -> bool:
    order = (1 << deg) - 1

    def xpow(e: int) -> int:
        result, base = 1, 2 % f if deg > 1 else 1
        while e:
            if e & 1:
                result = _polymulmod(result, base, f, deg)
            base = _polymulmod(base, base, f, deg)
            e >>= 1
        return result

    if deg == 1:
        return f == 0b11
    if xpow(order) != 1:
        return False
    primes, n, p = [], order, 2
    while p * p <= n:
        if n % p == 0:
            primes.append(p)
            while n % p == 0:
                n //= p
        p += 1
    if n > 1:
        primes.append(n)
    return all(xpow(order // q) != 1 for q in primes)


@functools.cache
def primitive_polynomials(count: int) -> tuple[tuple[int, int], ...]:
    """The first `count` primitive polynomials over GF(2), by degree: (degree, bit mask)."""
    found = []
    deg = 1
    while len(found) < count:
        for f in range((1 << deg) | 1, 1 << (deg + 1), 2):
            if _is_primitive(f, deg):
                found.append((deg, f))
                if len(found) == count:
                    break
        deg += 1
    return tuple(found)


def direction_vectors(rng: np.random.Generator, dims: int) -> np.ndarray:
    """Sobol direction vectors [dims][SOBOL_BITS] (Bratley-Fox): dimension 0 is the van der Corput sequence;
    dimension d > 0 uses the d-th primitive polynomial, random odd initial numbers m_k < 2^k and the usual
    recurrence. v_k = m_k << (SOBOL_BITS - k)."""
    out = np.zeros((dims, SOBOL_BITS), np.int64)
    out[0] = [1 << (SOBOL_BITS - 1 - k) for k in range(SOBOL_BITS)]
    for d, (deg, f) in enumerate(primitive_polynomials(max(dims - 1, 0)), start=1):
        m = [int(rng.integers(0, 1 << k)) * 2 + 1 for k in range(deg)]  # m_{k+1} odd, < 2^(k+1)
        for k in range(deg, SOBOL_BITS):
            new = m[k - deg] ^ (m[k - deg] << deg)
            for i in range(1, deg):
                if f >> (deg - i) & 1:
                    new ^= m[k - i] << i
            m.append(new)
        out[d] = [m[k] << (SOBOL_BITS - 1 - k) for k in range(SOBOL_BITS)]
    return out.astype(np.int32)


# --- the market ---------------------------------------------------------------------------------------------

def brownian_bridge(times: np.ndarray):
    """The bridge's schedule over dates 1..n (times[i-1] is date i's time): which date each step fills (bi),
    its filled left and right neighbours (li, ri; 0 is time 0, value 0) and the weights and deviation."""
    n = len(times)
    t = np.concatenate([[0.0], times])
    bi, li, ri = [n], [0], [0]
    sd, lw, rw = [np.sqrt(t[n])], [0.0], [0.0]
    queue = [(0, n)]
    while queue:
        left, right = queue.pop(0)
        if right - left < 2:
            continue
        mid = (left + right) // 2
        span = t[right] - t[left]
        bi.append(mid), li.append(left), ri.append(right)
        lw.append((t[right] - t[mid]) / span)
        rw.append((t[mid] - t[left]) / span)
        sd.append(np.sqrt((t[mid] - t[left]) * (t[right] - t[mid]) / span))
        queue += [(left, mid), (mid, right)]
    assert sorted(bi) == list(range(1, n + 1))
    return np.array([bi, li, ri], np.int32), np.array([sd, lw, rw], np.float32)


def inputs(rng: np.random.Generator, contract: int, paths: int, dates: int, models: int):
    und = UNDERLYINGS[contract]
    if contract == 3:
        assert dates == 367, "contract 3 pays on 367 dates"
    horizon = {1: 1.0, 2: 5.0, 3: 1.0}[contract]
    times = horizon * np.arange(1, dates + 1) / dates
    dt = np.diff(np.concatenate([[0.0], times]))
    dir_vs = direction_vectors(rng, dates * und)
    cs, vols, drifts, starts, detvals, discts = [], [], [], [], [], []
    for _ in range(models):
        corr = np.eye(und)
        for i in range(und):
            for j in range(i):
                corr[i, j] = corr[j, i] = rng.uniform(0.1, 0.6)
        cs.append(np.linalg.cholesky(corr))
        sigma = rng.uniform(0.12, 0.25, und)
        rate, dividends = rng.uniform(0.005, 0.03), rng.uniform(0.0, 0.03, und)
        vols.append(np.broadcast_to(sigma, (dates, und)))
        drifts.append((rate - dividends - 0.5 * sigma ** 2) * dt[:, None])
        starts.append(STARTS[:und])
        detvals.append([np.exp(-dividends[0] * 0.01)])
        pay_times = {1: [horizon], 2: np.arange(1, 6), 3: [0.25, horizon]}[contract]
        discts.append(np.exp(-rate * np.asarray(pay_times, float)))
    bb_inds, bb_data = brownian_bridge(times)
    f32 = functools.partial(np.asarray, dtype=np.float32)
    return (np.int32(contract), np.int32(paths), dir_vs, f32(cs), f32(vols), f32(drifts), f32(starts),
            f32(detvals), f32(discts), bb_inds, bb_data)


# --- the estimator ------------------------------------------------------------------------------------------

def sobol_points(dir_vs: np.ndarray, paths: int) -> np.ndarray:
    """[paths][dims] uniform numbers in (0, 1): point n = 1..paths of the sequence."""
    n = np.arange(1, paths + 1, dtype=np.int64)
    gray = n ^ (n >> 1)
    acc = np.zeros((paths, dir_vs.shape[0]), np.int64)
    for bit in range(dir_vs.shape[1]):
        acc ^= ((gray >> bit) & 1)[:, None] * dir_vs[:, bit].astype(np.int64)[None, :]
    return acc.astype(np.float32) / np.float32(2.0 ** dir_vs.shape[1])


def _rational(x, num, den):
    f = np.float32
    p = np.full_like(x, f(num[-1]))
    q = np.full_like(x, f(den[-1]))
    for a, b in zip(num[-2::-1], den[-2::-1]):
        p = p * x + f(a)
        q = q * x + f(b)
    return p / q


SMALL = ((3.387132872796366608, 133.14166789178437745, 1971.5909503065514427, 13731.693765509461125,
          45921.953931549871457, 67265.770927008700853, 33430.575583588128105, 2509.0809287301226727),
         (1.0, 42.313330701600911252, 687.1870074920579083, 5394.1960214247511077, 21213.794301586595867,
          39307.89580009271061, 28729.085735721942674, 5226.495278852854561))
INTERMEDIATE = ((1.42343711074968357734, 4.6303378461565452959, 5.7694972214606914055, 3.64784832476320460504,
                 1.27045825245236838258, 0.24178072517745061177, 0.0227238449892691845833,
                 7.7454501427834140764e-4),
                (1.0, 2.05319162663775882187, 1.6763848301838038494, 0.68976733498510000455,
                 0.14810397642748007459, 0.0151986665636164571966, 5.475938084995344946e-4,
                 1.05075007164441684324e-9))
TAIL = ((6.6579046435011037772, 5.4637849111641143699, 1.7848265399172913358, 0.29656057182850489123,
         0.026532189526576123093, 0.0012426609473880784386, 2.71155556874348757815e-5,
         2.01033439929228813265e-7),
        (1.0, 0.59983220655588793769, 0.13692988092273580531, 0.0148753612908506148525,
         7.868691311456132591e-4, 1.8463183175100546818e-5, 1.4215117583164458887e-7,
         2.04426310338993978564e-5))


def ugaussian(p: np.ndarray) -> np.ndarray:
    """The inverse of the standard normal distribution function (Wichura's AS241, float32)."""
    f = np.float32
    dp = p - f(0.5)
    small = dp * _rational(f(0.180625) - dp * dp, *SMALL)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.sqrt(-np.log(np.where(dp < 0, p, f(0.5) - dp)))
        far = np.where(r <= 5, _rational(r - f(1.6), *INTERMEDIATE), _rational(r - f(5.0), *TAIL))
    return np.where(np.abs(dp) <= f(0.425), small, np.where(dp < 0, -far, far))


def bridge(gauss: np.ndarray, bb_inds: np.ndarray, bb_data: np.ndarray) -> np.ndarray:
    """Brownian increments [..., dates] from normal deviates [..., dates]."""
    bi, li, ri = bb_inds - 1
    sd, lw, rw = bb_data
    path = np.zeros_like(gauss)
    path[..., bi[0]] = sd[0] * gauss[..., 0]
    for i in range(1, gauss.shape[-1]):
        value = rw[i] * path[..., ri[i]] + sd[i] * gauss[..., i]
        if li[i] >= 0:
            value = value + lw[i] * path[..., li[i]]
        path[..., bi[i]] = value
    return np.concatenate([path[..., :1], np.diff(path, axis=-1)], axis=-1)


def _worst(xs):
    return np.minimum(np.minimum(xs[..., 0] / np.float32(3758.05), xs[..., 1] / np.float32(11840.0)),
                      xs[..., 2] / np.float32(1200.0))


def payoff(contract: int, prices: np.ndarray, discts: np.ndarray, detval: np.ndarray) -> np.ndarray:
    """The discounted payoff of each path; prices [paths][dates][und]."""
    if contract == 1:
        return np.maximum((prices[:, 0, 0] - np.float32(4000.0)) * detval[0], 0) * discts[0]
    if contract == 2:
        worst = _worst(prices)  # [paths][5]
        last = worst[:, 4]
        amount = np.where(last >= 1, 1750.0, np.where(last > 0.75, 1000.0, last * np.float32(1000.0)))
        date = np.full(len(prices), 4)
        for d in (3, 2, 1, 0):  # the first date whose worst performance is at least 1 pays
            hit = worst[:, d] >= 1
            amount = np.where(hit, 1150.0 + 150.0 * d, amount)
            date = np.where(hit, d, date)
        return amount * discts[date]
    barrier = (prices[..., 0] <= 2630.635) | (prices[..., 1] <= 8288.0) | (prices[..., 2] <= 840.0)
    final = prices[:, 366]
    below_start = (final[:, 0] < 3758.05) | (final[:, 1] < 11840.0) | (final[:, 2] < 1200.0)
    amount = np.where(barrier.any(axis=1) & below_start, np.float32(1000.0) * _worst(final), 1000.0)
    return 100.0 * discts[0] + amount * discts[1]


def reference(contract, num_paths, dir_vs, md_cs, md_vols, md_drifts, md_starts, md_detvals, md_discts,
              bb_inds, bb_data):
    contract, paths = int(contract), int(num_paths)
    models, und = md_starts.shape
    dates = bb_inds.shape[1]
    gauss = ugaussian(sobol_points(dir_vs, paths)).reshape(paths, dates, und)
    incr = np.moveaxis(bridge(np.moveaxis(gauss, 1, 2), bb_inds, bb_data), 2, 1)  # [paths][dates][und]
    out = np.empty(models, np.float32)
    for m in range(models):
        lower = np.tril(md_cs[m])
        noises = np.einsum("pdk,jk->pdj", incr, lower).astype(np.float32)
        growth = np.exp(md_drifts[m] + noises * md_vols[m])
        prices = md_starts[m] * np.cumprod(growth, axis=1, dtype=np.float32)
        pays = payoff(contract, prices, md_discts[m], md_detvals[m])
        out[m] = np.sum(pays, dtype=np.float64) / paths
    return (out,)

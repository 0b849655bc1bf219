-- heston32 (PPoPP'19): calibration of the Heston stochastic-volatility model to a set of quoted options, in
-- single precision. A differential-evolution optimiser (np candidates, until max_global evaluations of the
-- objective) searches the five Heston parameters; the objective, evaluated for every candidate of a
-- generation at once, is the squared distance between the quotes' Black-Scholes prices and the Heston prices,
-- scaled by vega. A Heston price is an integral over a Gauss-Laguerre rule: per candidate (the outer map), a
-- sum over the quotes (a redomap) of a sum over the integration points (a reduce). The characteristic
-- function depends on the maturity only, so it is computed per (point, maturity) and looked up per quote.
--
-- The optimiser's random numbers are a minimal-standard LCG split per candidate with an integer hash.
-- Objective values that are not numbers (parameters where the characteristic function overflows) count as
-- infinitely bad, so that the choice of the best candidate does not depend on the order of a reduction.
--
-- The search is chaotic: which of two close candidates wins depends on the last bits of the objective, which
-- differ between devices (fused multiply-adds, the order of a reduction). Like futhark-benchmarks' heston32,
-- the long searches (the training and paper datasets) are therefore timed but not validated; the CI
-- datasets' short searches are, for every version.
--
-- Generate the data files first: python futhark_examples/gen_data.py heston32
-- ==
-- entry: main
-- "ci" ci input @ data/heston32-ci.in output @ data/heston32-ci.out
-- "ci-ten" ci input @ data/heston32-ci-ten.in output @ data/heston32-ci-ten.out
-- "train-1162" train input @ data/heston32-train-1162.in
-- "train-9000" train input @ data/heston32-train-9000.in
-- "1062" paper notune input @ data/heston32-1062.in
-- "10000" paper notune input @ data/heston32-10000.in

-- Complex numbers ------------------------------------------------------------------------------------------

def cre (x: f32): (f32, f32) = (x, 0)
def cim (y: f32): (f32, f32) = (0, y)
def cadd ((a, b): (f32, f32)) ((c, d): (f32, f32)): (f32, f32) = (a + c, b + d)
def csub ((a, b): (f32, f32)) ((c, d): (f32, f32)): (f32, f32) = (a - c, b - d)
def cmul ((a, b): (f32, f32)) ((c, d): (f32, f32)): (f32, f32) = (a * c - b * d, a * d + b * c)
def cdiv ((a, b): (f32, f32)) ((c, d): (f32, f32)): (f32, f32) =
  let m = c * c + d * d
  in ((a * c + b * d) / m, (b * c - a * d) / m)
def cexp ((a, b): (f32, f32)): (f32, f32) = let e = f32.exp a in (e * f32.cos b, e * f32.sin b)
def clog ((a, b): (f32, f32)): (f32, f32) = (f32.log (f32.sqrt (a * a + b * b)), f32.atan2 b a)
def csqrt ((a, b): (f32, f32)): (f32, f32) =
  let m = f32.sqrt (a * a + b * b)
  in (f32.sqrt ((a + m) / 2), f32.sgn b * f32.sqrt ((m - a) / 2))

-- Dates (yyyymmdd) and Black-Scholes ----------------------------------------------------------------------

-- Days since 1970-01-01 of a Gregorian date (years from 1 on).
def days_of_date (x: i32): i32 =
  let (y, m, d) = (x / 10000, (x / 100) % 100, x % 100)
  let y = if m <= 2 then y - 1 else y
  let era = y / 400
  let yoe = y - era * 400
  let doy = (153 * (if m > 2 then m - 3 else m + 9) + 2) / 5 + d - 1
  let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
  in era * 146097 + doe - 719468

-- The normal distribution function, through Abramowitz and Stegun's approximation of erf.
def pnorm (x: f32): f32 =
  let erf (u: f32) =
    let t = 1 / (1 + 0.3275911 * u)
    in 1 - t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
           * f32.exp (0 - u * u)
  let u = x / f32.sqrt 2
  in 0.5 * (1 + (if u < 0 then 0 - erf (0 - u) else erf u))

-- The price of a call with spot 1 and its vega (at least 0.1), at volatility `vol` and `t` years.
def bs_call (strike: f32) (t: f32) (vol: f32): (f32, f32) =
  let sqrt_t = f32.sqrt t
  let d1 = (f32.log (1 / strike) + 0.5 * vol * vol * t) / (vol * sqrt_t)
  let d2 = d1 - vol * sqrt_t
  let price = pnorm d1 - strike * pnorm d2
  let vega = sqrt_t * f32.exp (-0.5 * d1 * d1) / f32.sqrt (2 * f32.pi)
  in (price, f32.max 0.1 vega)

-- The Heston price of a quote ------------------------------------------------------------------------------

-- The characteristic function of the log price at maturity t, for parameters
-- (initial variance, long-term variance, correlation, mean reversion, variance volatility).
def psi_h ((v0, theta, rho, kappa, eta): (f32, f32, f32, f32, f32)) (t: f32) (xi: (f32, f32)): (f32, f32) =
  let eta2 = eta * eta
  let coeff1 = cre (kappa * theta / eta2)
  let coeff2 = cre (v0 / eta2)
  let d0 = csub (cre kappa) (cmul (cim (rho * eta)) xi)
  let d = csqrt (cadd (cmul d0 d0) (cmul (cre eta2) (cmul xi (cadd (cim 1) xi))))
  let a_minus = csub d0 d
  let g = cdiv a_minus (cadd d0 d)
  let e = cexp (cmul (cre (0 - t)) d)
  let one_minus_ge = csub (cre 1) (cmul g e)
  in cexp (cadd (cmul coeff1 (csub (cmul a_minus (cre t))
                                   (cmul (cre 2) (clog (cdiv one_minus_ge (csub (cre 1) g))))))
                (cdiv (cmul coeff2 (cmul a_minus (csub (cre 1) e))) one_minus_ge))

-- The variance of the Black-Scholes control variate: the expected variance averaged over [0, t]. (FinPar's
-- heston takes a finite difference of psi_h instead, which single precision computes with an error of a
-- percent, and different devices with different errors.)
def control_variance ((v0, theta, _, kappa, _): (f32, f32, f32, f32, f32)) (t: f32): f32 =
  theta + (v0 - theta) * (1 - f32.exp (0 - kappa * t)) / (kappa * t)

-- Squared vega-scaled distance between the quotes' prices and the Heston prices of parameters p.
def objective [num_points][num_mats][n] (gl_x: [num_points]f32) (gl_w: [num_points]f32) (mat_t: [num_mats]f32)
                                        (quote_mat: [n]i32) (strikes: [n]f32) (prices: [n]f32) (vegas: [n]f32)
                                        (p: (f32, f32, f32, f32, f32)): f32 =
  let variances = map (control_variance p) mat_t
  -- coeffs[j][m]: the integrand's coefficient at point j and maturity m.
  let coeffs =
    map2 (\xj wj ->
            map2 (\t s2 ->
                    let xi = (xj, -1f32)
                    let bs = cexp (cmul (cre (-0.5 * t * s2)) (cmul xi (cadd (cim 1) xi)))
                    let c = cdiv (csub bs (psi_h p t xi)) (cmul (cre xj) xi)
                    in (wj * c.0, wj * c.1))
                 mat_t variances)
         gl_x gl_w
  let distance =
    f32.sum (map4 (\m k price vega ->
                     let log_k = f32.log k
                     let integral =
                       f32.sum (map2 (\xj row ->
                                        let (cr, ci) = row[m]
                                        let phase = 0 - xj * log_k
                                        in cr * f32.cos phase - ci * f32.sin phase)
                                     gl_x coeffs)
                     let t = mat_t[m]
                     let s = f32.sqrt (variances[m] * t)
                     let d1 = (0 - log_k) / s + 0.5 * s
                     let control = pnorm d1 - k * pnorm (d1 - s)
                     let model = f32.max (f32.max 0 (1 - k)) (f32.min 1 (integral / f32.pi + control))
                     let diff = (price - model) / vega
                     in diff * diff)
                  quote_mat strikes prices vegas)
  in if f32.isnan distance then f32.inf else distance

-- Differential evolution -----------------------------------------------------------------------------------

def rng_modulus: i64 = 2147483647

def next_state (s: i64): i64 = (s * 48271) % rng_modulus

-- A uniform number in [lo, hi) and the next state.
def uniform (lo: f32) (hi: f32) (s: i64): (i64, f32) =
  let s' = next_state s
  in (s', lo + (hi - lo) * (f32.i64 (s' - 1) / f32.i64 (rng_modulus - 1)))

-- A uniform integer in [0, n) and the next state.
def uniform_int (n: i32) (s: i64): (i64, i32) =
  let s' = next_state s
  in (s', i32.i64 (s' % i64.i32 n))

def hash (x: u32): u32 =
  let x = ((x >> 16) ^ x) * 0x45d9f3b
  let x = ((x >> 16) ^ x) * 0x45d9f3b
  in (x >> 16) ^ x

-- n independent states from one.
def split (n: i64) (s: i64): [n]i64 =
  map (\i -> let s' = (s ^ i64.u32 (hash (u32.i64 i))) % rng_modulus
             in if s' == 0 then 1 else s')
      (iota n)

def min_and_index ((a, ai): (f32, i32)) ((b, bi): (f32, i32)): (f32, i32) =
  if a < b then (a, ai) else if b < a then (b, bi) else if ai < bi then (a, ai) else (b, bi)

def tuple5 (x: [5]f32): (f32, f32, f32, f32, f32) = (x[0], x[1], x[2], x[3], x[4])

-- A mutant of candidate i: three distinct others a, b and c, and each component either x_r1 + w (x_b - x_c)
-- (x_r1 the best candidate or a, by a coin) or kept.
def mutate [np] (lower: [5]f32) (upper: [5]f32) (weight: f32) (best: i32) (x: [np][5]f32)
                (s: i64) (i: i32) (x_i: [5]f32): (i64, [5]f32) =
  let n = i32.i64 np
  let (s, a) = loop (s, a) = uniform_int n s while a == i do uniform_int n s
  let (s, b) = loop (s, b) = uniform_int n s while b == i || b == a do uniform_int n s
  let (s, c) = loop (s, c) = uniform_int n s while c == i || c == a || c == b do uniform_int n s
  let (s, r) = uniform 0 1 s
  let x_r1 = if r <= 0.5 then x[best] else x[a]
  let (s, j0) = uniform_int 5 s
  let (s, rs) = loop (s, rs) = (s, replicate 5 0f32) for j < 5 do
                  let (s, u) = uniform 0 1 s
                  in (s, rs with [j] = u)
  let v = map (\j -> let aux = x_r1[j] + weight * (x[b][j] - x[c][j])
                     in if i32.i64 j == j0 || (rs[j] <= 0.9 && lower[j] <= aux && aux <= upper[j])
                        then aux else x_i[j])
              (iota 5)
  in (s, v)

def main [n] (max_global: i32) (num_points: i32) (np: i32) (today: i32)
             (quotes_maturity: [n]i32) (quotes_strike: [n]f64) (quotes_quote: [n]f64) =
  let np = i64.i32 np
  let strikes = map f32.f64 quotes_strike
  -- The quotes come sorted by maturity: the distinct maturities, in years, and each quote's.
  let days = map (\d -> days_of_date d - days_of_date today) quotes_maturity
  let starts = map (\i -> i == 0 || days[i] != days[i - 1]) (iota n)
  let quote_mat = map (\m -> m - 1) (scan (+) 0 (map (\b -> if b then 1 else 0) starts))
  let mat_t = map (\(d, _) -> f32.i32 d / 365) (filter (\(_, b) -> b) (zip days starts))
  let (prices, vegas) =
    unzip (map3 (\k d q -> bs_call k (f32.i32 d / 365) (f32.f64 q)) strikes days quotes_quote)
  -- The Gauss-Laguerre rule.
  let (gl_x, gl_w) =
    if num_points == 10
    then ([0.1377934705404924, 0.7294545495031708, 1.8083429017403143, 3.4014336978548352, 5.55249614006424,
           8.330152746763265, 11.843785837901915, 16.279257831376615, 21.99658581198136, 29.920697012273774],
          [0.35400973860699803, 0.8319023010435621, 1.3302885617494675, 1.8630639031111378, 2.450255558073156,
           3.122764155173507, 3.9341526954948387, 4.992414872215118, 6.572202485111805, 9.784695840367801])
    else ([0.07053988969198874, 0.3721268180016133, 0.9165821024832457, 1.7073065310281683, 2.749199255315394,
           4.04892531380806, 5.615174970938837, 7.459017454225468, 9.59439286548323, 12.03880256060886,
           14.814293416061962, 17.94889554312255, 21.478788273773705, 25.45170264418549, 29.932554890200286,
           35.01343396898007, 40.83305723940129, 47.619993970772064, 55.81079576805181, 66.52441652386588],
          [0.18108006241898922, 0.4225567678786019, 0.6669095467014556, 0.9153523727812171, 1.1695397072804468,
           1.4313549860432604, 1.702981136708622, 1.9870159022074663, 2.286635720019974, 2.6058349131697116,
           2.949783261906035, 3.3253969236002114, 3.742254738382389, 4.214237825042351, 4.762516191899977,
           5.421727418640771, 6.254011265769629, 7.38731454069754, 9.151328572719786, 12.893388638453542])
  let f (x: [5]f32) = objective gl_x gl_w mat_t quote_mat strikes prices vegas (tuple5 x)
  -- (initial variance, long-term variance, correlation, mean reversion, variance volatility)
  let lower = [1e-6f32, 1e-6, -1, 1e-4, 1e-4]
  let upper = [1f32, 1, 0, 4, 2]
  let (states, x) =
    unzip (map (\s -> loop (s, x) = (s, replicate 5 0f32) for j < 5 do
                        let (s, u) = uniform 0 1 s
                        in (s, x with [j] = lower[j] + (upper[j] - lower[j]) * u))
               (split np 291))
  let fx = map f x
  let (fx0, best) = reduce_comm min_and_index (f32.inf, 0) (zip fx (map i32.i64 (iota np)))
  let (_, calls, _, best, _, x) =
    loop (s, calls, fx0, best, fx, x) = (states[0], i32.i64 np, fx0, best, fx, x)
    while calls < max_global && fx0 > 0 do
      let (s, weight) = uniform 0.5 1 s
      let (states, v) = unzip (map3 (mutate lower upper weight best x) (split np s) (map i32.i64 (iota np)) x)
      let f_v = map f v
      let x' = map4 (\fv fxi xi vi -> if fv < fxi then vi else xi) f_v fx x v
      let fx' = map2 f32.min f_v fx
      let (fx0', best') = reduce_comm min_and_index (fx0, best) (zip f_v (map i32.i64 (iota np)))
      in (states[0], calls + i32.i64 np, fx0', best', fx', x')
  let p = x[best]
  let rmse = f32.sqrt (f p * (10000 / f32.i64 n))
  in (rmse, calls, p[0], p[1], p[3], p[4], p[2])

-- FinPar's OptionPricing (PPoPP'19): Monte Carlo pricing of a financial contract under several market models.
-- Each of the num_mc_it paths (the outer map) takes its own point of a Sobol sequence (the gray-code
-- formulation: point n is the XOR of the direction vectors whose bit is set in gray(n), so paths are
-- independent), turns it into normal deviates (Wichura's rational approximation of the inverse normal),
-- into Brownian increments with a Brownian bridge over the dates (a sequential loop of in-place updates per
-- underlying), and, for each market model, into correlated Black-Scholes prices (a Cholesky factor md_c, a
-- scan over the dates) and the contract's discounted payoff. The payoffs are summed over the paths (a
-- reduction of arrays of one price per model) and averaged.
-- Contracts: 1, a European call on one underlying; 2, the DJ Eurostoxx 50 / Nikkei 225 / S&P 500 "worst-of"
-- autocallable over 5 dates; 3, the 367-date barrier contract on the same underlyings.
--
-- Generate the data files first: python futhark_examples/gen_data.py optionpricing
-- ==
-- entry: main
-- "ci-c1" ci input @ data/optionpricing-ci-c1.in output @ data/optionpricing-ci-c1.out
-- "ci-c2" ci input @ data/optionpricing-ci-c2.in output @ data/optionpricing-ci-c2.out
-- "ci-c3" ci input @ data/optionpricing-ci-c3.in output @ data/optionpricing-ci-c3.out
-- "D1" paper notune input @ data/optionpricing-D1.in output @ data/optionpricing-D1.out
-- "D2" paper notune input @ data/optionpricing-D2.in output @ data/optionpricing-D2.out
-- "train-D1" train input @ data/optionpricing-train-D1.in output @ data/optionpricing-train-D1.out
-- "train-D2" train input @ data/optionpricing-train-D2.in output @ data/optionpricing-train-D2.out

-- Sobol numbers ----------------------------------------------------------------------------------------------

def gray_code (x: i32): i32 = (x >> 1) ^ x

def test_bit (n: i32) (bit: i32): bool = (n & (1 << bit)) != 0

-- The XOR of the direction numbers selected by the bits of gray(n).
def xor_inds [num_bits] (n: i32) (dir_v: [num_bits]i32): i32 =
  let g = gray_code n
  in reduce (^) 0 (map2 (\dv i -> if test_bit g (i32.i64 i) then dv else 0) dir_v (iota num_bits))

def sobol_point [dims][num_bits] (dir_vs: [dims][num_bits]i32) (n: i32): [dims]f32 =
  let divisor = 2f32 ** f32.i64 num_bits
  in map (\dir_v -> f32.i32 (xor_inds n dir_v) / divisor) dir_vs

-- The inverse normal (Wichura, AS241) ------------------------------------------------------------------------

def rational (x: f32) (a: [8]f32) (b: [8]f32): f32 =
  let num = loop acc = a[7] for i in 6..>(-1) do acc * x + a[i]
  let den = loop acc = b[7] for i in 6..>(-1) do acc * x + b[i]
  in num / den

def small_case (q: f32): f32 =
  q * rational (0.180625 - q * q)
                [3.387132872796366608, 133.14166789178437745, 1971.5909503065514427, 13731.693765509461125,
                 45921.953931549871457, 67265.770927008700853, 33430.575583588128105, 2509.0809287301226727]
                [1.0, 42.313330701600911252, 687.1870074920579083, 5394.1960214247511077,
                 21213.794301586595867, 39307.89580009271061, 28729.085735721942674, 5226.495278852854561]

def intermediate (r: f32): f32 =
  rational (r - 1.6)
           [1.42343711074968357734, 4.6303378461565452959, 5.7694972214606914055, 3.64784832476320460504,
            1.27045825245236838258, 0.24178072517745061177, 0.0227238449892691845833, 7.7454501427834140764e-4]
           [1.0, 2.05319162663775882187, 1.6763848301838038494, 0.68976733498510000455,
            0.14810397642748007459, 0.0151986665636164571966, 5.475938084995344946e-4,
            1.05075007164441684324e-9]

def tail (r: f32): f32 =
  rational (r - 5.0)
           [6.6579046435011037772, 5.4637849111641143699, 1.7848265399172913358, 0.29656057182850489123,
            0.026532189526576123093, 0.0012426609473880784386, 2.71155556874348757815e-5,
            2.01033439929228813265e-7]
           [1.0, 0.59983220655588793769, 0.13692988092273580531, 0.0148753612908506148525,
            7.868691311456132591e-4, 1.8463183175100546818e-5, 1.4215117583164458887e-7,
            2.04426310338993978564e-5]

def ugaussian (p: f32): f32 =
  let dp = p - 0.5
  in if f32.abs dp <= 0.425 then small_case dp
     else let r = f32.sqrt (-(f32.log (if dp < 0 then p else 0.5 - dp)))
          let x = if r <= 5 then intermediate r else tail r
          in if dp < 0 then -x else x

-- The Brownian bridge ----------------------------------------------------------------------------------------

-- The increments of one underlying's Brownian path over the dates, from its normal deviates: bb_inds holds
-- (1-based) the date each step fills and its filled left and right neighbours (0: time 0), bb_data the
-- deviation and the neighbours' weights.
def brownian_bridge_dates [num_dates] (bb_inds: [3][num_dates]i32) (bb_data: [3][num_dates]f32)
                                      (gauss: [num_dates]f32): [num_dates]f32 =
  let (bi, li, ri) = (bb_inds[0], bb_inds[1], bb_inds[2])
  let (sd, lw, rw) = (bb_data[0], bb_data[1], bb_data[2])
  let path = replicate num_dates 0f32
  let path[bi[0] - 1] = sd[0] * gauss[0]
  let path =
    loop path for i in 1..<num_dates do
      let left = li[i] - 1
      let value = rw[i] * path[ri[i] - 1] + sd[i] * gauss[i]
      let value = if left == -1 then value else value + lw[i] * path[left]
      in path with [bi[i] - 1] = value
  in loop path for ii in 1..<num_dates do
       let i = num_dates - ii
       in path with [i] = path[i] - path[i - 1]

def brownian_bridge [num_dates][num_und] (bb_inds: [3][num_dates]i32) (bb_data: [3][num_dates]f32)
                                         (gauss: [num_dates][num_und]f32): [num_dates][num_und]f32 =
  transpose (map (brownian_bridge_dates bb_inds bb_data) (transpose gauss))

-- Black-Scholes ----------------------------------------------------------------------------------------------

-- Correlates each date's increments with the lower triangle of md_c (a Cholesky factor).
def correlate_deltas [num_und][num_dates] (md_c: [num_und][num_und]f32) (zds: [num_dates][num_und]f32)
                                          : [num_dates][num_und]f32 =
  map (\zi -> tabulate num_und (\j -> f32.sum (map2 (*) (take (j + 1) zi) (take (j + 1) md_c[j])))) zds

def black_scholes [num_dates][num_und] (bb_arr: [num_dates][num_und]f32) (md_c: [num_und][num_und]f32)
                                       (md_vols: [num_dates][num_und]f32) (md_drifts: [num_dates][num_und]f32)
                                       (md_starts: [num_und]f32): [num_dates][num_und]f32 =
  let noises = correlate_deltas md_c bb_arr
  let growth = map3 (\n v d -> map3 (\n v d -> f32.exp (d + n * v)) n v d) noises md_vols md_drifts
  in map (map2 (*) md_starts) (scan (map2 (*)) (replicate num_und 1f32) growth)

-- Payoffs ----------------------------------------------------------------------------------------------------

-- The worst performance of the three underlyings against their start values.
def worst_of (xs: [3]f32): f32 =
  f32.min (xs[0] / 3758.05) (f32.min (xs[1] / 11840.0) (xs[2] / 1200.0))

def payoff1 (md_disct: []f32) (md_detval: []f32) (xss: [1][1]f32): f32 =
  f32.max 0 ((xss[0, 0] - 4000.0) * md_detval[0]) * md_disct[0]

-- Pays at the first date whose worst performance reaches 1, else at the last date by the last one.
def payoff2 (md_disct: []f32) (xss: [5][3]f32): f32 =
  let (date, amount) =
    if 1 <= worst_of xss[0] then (0, 1150.0)
    else if 1 <= worst_of xss[1] then (1, 1300.0)
    else if 1 <= worst_of xss[2] then (2, 1450.0)
    else if 1 <= worst_of xss[3] then (3, 1600.0)
    else let last = worst_of xss[4]
         in (4, if 1 <= last then 1750.0 else if 0.75 < last then 1000.0 else last * 1000.0)
  in amount * md_disct[date]

-- A coupon, and the notional reduced by the worst performance if some barrier was hit on some date and the
-- contract ends below a start value.
def payoff3 (md_disct: []f32) (xss: [367][3]f32): f32 =
  let hit = any (\x -> x[0] <= 2630.635 || x[1] <= 8288.0 || x[2] <= 840.0) xss
  let last = xss[366]
  let below = last[0] < 3758.05 || last[1] < 11840.0 || last[2] < 1200.0
  let amount = if hit && below then 1000.0 * worst_of last else 1000.0
  in 100.0 * md_disct[0] + amount * md_disct[1]

def payoff [num_dates][num_und] (contract: i32) (md_disct: []f32) (md_detval: []f32)
                                (xss: [num_dates][num_und]f32): f32 =
  if contract == 1 then payoff1 md_disct md_detval (xss :> [1][1]f32)
  else if contract == 2 then payoff2 md_disct (xss :> [5][3]f32)
  else if contract == 3 then payoff3 md_disct (xss :> [367][3]f32)
  else 0.0

entry main [num_bits][num_models][num_und][num_dates][num_discts]
           (contract: i32) (num_mc_it: i32)
           (dir_vs: [num_dates * num_und][num_bits]i32)
           (md_cs: [num_models][num_und][num_und]f32)
           (md_vols: [num_models][num_dates][num_und]f32)
           (md_drifts: [num_models][num_dates][num_und]f32)
           (md_starts: [num_models][num_und]f32)
           (md_detvals: [num_models][1]f32)
           (md_discts: [num_models][num_discts]f32)
           (bb_inds: [3][num_dates]i32)
           (bb_data: [3][num_dates]f32): [num_models]f32 =
  let payoffs =
    map (\n ->
           let gauss = map ugaussian (sobol_point dir_vs (i32.i64 n + 1))
           let increments = brownian_bridge bb_inds bb_data (unflatten gauss)
           in map5 (\c vols drifts starts (disct, detval) ->
                      payoff contract disct detval (black_scholes increments c vols drifts starts))
                   md_cs md_vols md_drifts md_starts (zip md_discts md_detvals))
        (iota (i64.i32 num_mc_it))
  let total = reduce (map2 (+)) (replicate num_models 0f32) payoffs
  in map (/ f32.i32 num_mc_it) total

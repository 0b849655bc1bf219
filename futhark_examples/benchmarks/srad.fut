-- Rodinia's SRAD: speckle-reducing anisotropic diffusion of an ultrasound image. The u8 image is scaled and
-- exponentiated, then each of `niter` iterations computes the image's statistics (two reductions), the
-- directional derivatives and the diffusion coefficient of every pixel (a map over a map, reading the four
-- neighbours, clamped at the borders), and the divergence update (another map over a map, reading the
-- coefficients of the south and east neighbours); the result is log-scaled back to 0..255. The region of
-- interest is the whole image. The result stays f32 (Rodinia rounds it to bytes).
--
-- Generate the data files first: python futhark_examples/gen_data.py srad
-- ==
-- entry: main
-- "ci" ci input @ data/srad-ci.in output @ data/srad-ci.out
-- "ci-wide" ci input @ data/srad-ci-wide.in output @ data/srad-ci-wide.out
-- "train-D1" train input @ data/srad-train-D1.in output @ data/srad-train-D1.out
-- "D1" paper notune input @ data/srad-D1.in output @ data/srad-D1.out

def step [rows][cols] (lambda: f32) (image: [rows][cols]f32): [rows][cols]f32 =
  let n = f32.i64 (rows * cols)
  let total = f32.sum (map f32.sum image)
  let total2 = f32.sum (map (\row -> f32.sum (map (\x -> x * x) row)) image)
  let mean = total / n
  let variance = total2 / n - mean * mean
  let q0sqr = variance / (mean * mean)
  let (dN, dS, dW, dE, c) =
    unzip5 (map (\i -> unzip5 (map (\j ->
                   let jc = image[i, j]
                   let dn = image[i64.max (i - 1) 0, j] - jc
                   let ds = image[i64.min (i + 1) (rows - 1), j] - jc
                   let dw = image[i, i64.max (j - 1) 0] - jc
                   let de = image[i, i64.min (j + 1) (cols - 1)] - jc
                   let g2 = (dn * dn + ds * ds + dw * dw + de * de) / (jc * jc)
                   let l = (dn + ds + dw + de) / jc
                   let num = 0.5 * g2 - (1 / 16) * l * l
                   let den = 1 + 0.25 * l
                   let qsqr = num / (den * den)
                   let den = (qsqr - q0sqr) / (q0sqr * (1 + q0sqr))
                   let coef = f32.max 0 (f32.min 1 (1 / (1 + den)))
                   in (dn, ds, dw, de, coef)) (iota cols))) (iota rows))
  in map (\i -> map (\j ->
           let cn = c[i, j]
           let cs = c[i64.min (i + 1) (rows - 1), j]
           let cw = c[i, j]
           let ce = c[i, i64.min (j + 1) (cols - 1)]
           let d = cn * dN[i, j] + cs * dS[i, j] + cw * dW[i, j] + ce * dE[i, j]
           in image[i, j] + 0.25 * lambda * d) (iota cols)) (iota rows)

entry main [rows][cols] (niter: i32) (lambda: f32) (image: [rows][cols]u8): [rows][cols]f32 =
  let scaled = map (map (\p -> f32.exp (f32.u8 p / 255))) image
  let diffused = loop img = scaled for _i < niter do step lambda img
  in map (map (\x -> f32.log x * 255)) diffused

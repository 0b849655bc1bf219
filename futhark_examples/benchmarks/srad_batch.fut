-- The PPoPP'19 paper's batched SRAD: Rodinia's speckle-reducing anisotropic diffusion (see srad.fut) mapped
-- over a batch of images. The outer map holds the loop of iterations, which holds the reductions and the maps
-- over each image: many small images favour a workgroup per image (the loop inside the workgroup), one large
-- image the flattened maps.
--
-- Generate the data files first: python futhark_examples/gen_data.py srad_batch
-- ==
-- entry: main
-- "ci" ci input @ data/srad_batch-ci.in output @ data/srad_batch-ci.out
-- "ci-one" ci input @ data/srad_batch-ci-one.in output @ data/srad_batch-ci-one.out
-- "train-D1" train input @ data/srad_batch-train-D1.in output @ data/srad_batch-train-D1.out
-- "train-D2" train input @ data/srad_batch-train-D2.in output @ data/srad_batch-train-D2.out
-- "D1" paper notune input @ data/srad_batch-D1.in output @ data/srad_batch-D1.out
-- "D2" paper notune input @ data/srad_batch-D2.in output @ data/srad_batch-D2.out

def diffusion_step [rows][cols] (lambda: f32) (image: [rows][cols]f32): [rows][cols]f32 =
  let n = f32.i64 (rows * cols)
  let mean = f32.sum (map f32.sum image) / n
  let variance = f32.sum (map (\row -> f32.sum (map (\x -> x * x) row)) image) / n - mean * mean
  let q0sqr = variance / (mean * mean)
  let derivatives =
    map (\i -> map (\j ->
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
           in (dn, ds, dw, de, f32.max 0 (f32.min 1 (1 / (1 + den))))) (iota cols)) (iota rows)
  let coef = map (map (.4)) derivatives
  in map (\i -> map (\j ->
           let (dn, ds, dw, de, c) = derivatives[i, j]
           let d = c * dn + coef[i64.min (i + 1) (rows - 1), j] * ds + c * dw + coef[i, i64.min (j + 1) (cols - 1)] * de
           in image[i, j] + 0.25 * lambda * d) (iota cols)) (iota rows)

def srad [rows][cols] (niter: i32) (lambda: f32) (image: [rows][cols]u8): [rows][cols]f32 =
  let scaled = map (map (\p -> f32.exp (f32.u8 p / 255))) image
  let diffused = loop img = scaled for _i < niter do diffusion_step lambda img
  in map (map (\x -> f32.log x * 255)) diffused

entry main [n][rows][cols] (niter: i32) (lambda: f32) (images: [n][rows][cols]u8): [n][rows][cols]f32 =
  map (srad niter lambda) images

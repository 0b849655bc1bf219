-- Mandelbrot-like: a while loop (with tuple state) inside a two-dimensional map; the iteration counts differ
-- from point to point.
-- ==
-- input { [-1.5f32, -0.75f32, 0.0f32, 0.3f32, 1.0f32] [0.0f32, 0.5f32, 1.0f32] 30i32 }
-- output { [[30i32, 30i32, 30i32, 12i32, 3i32], [3i32, 6i32, 30i32, 30i32, 2i32], [2i32, 3i32, 30i32, 3i32,
--   2i32]] }

def escape (cr: f32) (ci: f32) (limit: i32): i32 =
  let (_, _, it) = loop (zr, zi, it) = (0f32, 0f32, 0) while it < limit && zr * zr + zi * zi <= 4 do
                     (zr * zr - zi * zi + cr, 2 * zr * zi + ci, it + 1)
  in it

entry main [h][w] (re: [w]f32) (im: [h]f32) (limit: i32): [h][w]i32 =
  map (\ci -> map (\cr -> escape cr ci limit) re) im

-- Bandwidth micro-benchmark: an elementwise sum (2 reads and 1 write per element).
entry main [n] (xs: [n]f32) (ys: [n]f32): [n]f32 = map2 (+) xs ys

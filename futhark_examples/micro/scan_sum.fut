-- Bandwidth micro-benchmark: a prefix sum (1 read and 1 write per element).
entry main [n] (xs: [n]f32): [n]f32 = scan (+) 0 xs

-- Bandwidth micro-benchmark: a sum (1 read per element).
entry main [n] (xs: [n]f32): f32 = reduce (+) 0 xs

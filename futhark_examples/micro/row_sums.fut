-- Bandwidth micro-benchmark: the sums of the rows of a matrix (1 read per element).
entry main [n][m] (xss: [n][m]f32): [n]f32 = map (\xs -> reduce (+) 0 xs) xss

-- Bandwidth micro-benchmark: a prefix sum of each row (1 read and 1 write per element).
entry main [n][m] (xss: [n][m]f32): [n][m]f32 = map (\xs -> scan (+) 0 xs) xss

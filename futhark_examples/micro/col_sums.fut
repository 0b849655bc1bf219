-- Bandwidth micro-benchmark: the sums of the columns of a matrix (G4; 1 read per element).
entry main [n][m] (xss: [n][m]f32): [m]f32 = reduce (map2 (+)) (replicate m 0) xss

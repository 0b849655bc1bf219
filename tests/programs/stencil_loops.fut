-- Stencil loops, which the tile_stencil_loops stage runs several steps a launch: each step maps over the
-- array the loop carries, an element reading its neighbours up to R places away (pathfinder's rows through
-- rotations, a five-point average whose reads an `if` guards, a cellular automaton on a ring, a step that
-- reads out of bounds at the edge). tests/test_stencils.py runs them with other tile sizes.
-- ==
-- entry: path
-- input { [[3i32, 1i32, 4i32, 1i32, 5i32, 9i32, 2i32, 6i32, 5i32, 3i32], [5i32, 8i32, 9i32, 7i32, 9i32, 3i32, 2i32, 3i32, 8i32, 4i32], [6i32, 2i32, 6i32, 4i32, 3i32, 3i32, 8i32, 3i32, 2i32, 7i32], [9i32, 5i32, 0i32, 2i32, 8i32, 8i32, 4i32, 1i32, 9i32, 7i32], [1i32, 6i32, 9i32, 3i32, 9i32, 9i32, 3i32, 7i32, 5i32, 1i32]] }
-- output { [14i32, 14i32, 17i32, 11i32, 19i32, 20i32, 11i32, 15i32, 13i32, 15i32] }
-- input { [[7i32], [3i32], [8i32], [1i32], [0i32], [6i32], [0i32]] }
-- output { [25i32] }
-- random input { [40][300]i32 }
-- auto output
-- random input { [3][1000]i32 }
-- auto output

entry path [n][m] (wall: [n][m]i32): [m]i32 =
  loop result = copy wall[0] for t < n - 1 do
    map4 (\i prev res next ->
            let res = if i > 0 then i32.min res prev else res
            let res = if i < m - 1 then i32.min res next else res
            in wall[t + 1, i] + res)
         (iota m) (rotate (-1) result) result (rotate 1 result)

-- ==
-- entry: heat
-- input { 3i64 [0.0f32, 1.0f32, 2.0f32, 8.0f32, -1.0f32, 3.5f32, 0.25f32, 7.0f32, 2.0f32] }
-- output { [0.0f32, 1.0f32, 1.5280001f32, 2.2540002f32, 2.752f32, 3.8220003f32, 3.75f32, 7.0f32, 2.0f32] }
-- input { 0i64 [0.0f32, 1.0f32, 2.0f32, 8.0f32] }
-- output { [0.0f32, 1.0f32, 2.0f32, 8.0f32] }
-- input { 5i64 [0.0f32, 1.0f32, 2.0f32] }
-- output { [0.0f32, 1.0f32, 2.0f32] }

entry heat [m] (steps: i64) (xs: [m]f32): [m]f32 =
  loop x = xs for _t < steps do
    map (\i -> if i >= 2 && i < m - 2 then 0.2f32 * (x[i - 2] + x[i - 1] + x[i] + x[i + 1] + x[i + 2]) else x[i])
        (iota m)

-- ==
-- entry: heat21
-- random input { [333]f32 }
-- auto output

entry heat21 [m] (xs: [m]f32): [m]f32 = heat 21 xs

-- ==
-- entry: rule90
-- input { 12i64 [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false] }
-- output { [false, false, false, true, false, false, false, false, false, false, false, true, false, false, false, false, false, false, false, true, false, false, false, false, false, false, false, true, false, false, false] }
-- input { 5i64 [true] }
-- output { [false] }

entry rule90 [m] (steps: i64) (cells: [m]bool): [m]bool =
  loop x = cells for _t < steps do map (\i -> x[(i - 1) % m] != x[(i + 1) % m]) (iota m)

-- ==
-- entry: edge
-- input { 0i64 [1i32, 2i32, 3i32] }
-- output { [1i32, 2i32, 3i32] }
-- input { 2i64 [1i32, 2i32, 3i32] }
-- error: Index \[3\] out of bounds

entry edge [m] (steps: i64) (xs: [m]i32): [m]i32 =
  loop x = xs for _t < steps do map (\i -> x[i] + x[i + 1]) (iota m)

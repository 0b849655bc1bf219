-- Rodinia's lavaMD: particles in a 3D grid of boxes (boxes1d^3 of them, par_per_box particles each, a
-- position and a charge per particle). For each particle of each box, the sum over all particles of its own
-- box and of its (up to 26) neighbour boxes of the potential and the force they exert, with the kernel of
-- Rodinia's lavaMD: v = exp(-2 alpha^2 r2) with r2 = v_i + v_j - <p_i, p_j>, the potential q_j v and the force
-- 2 q_j v (p_i - p_j). The neighbour lists are inputs (box numbers; box l has box_num_nghbs[l] of them, the
-- rest of its column is padding). The parallelism: a map over the boxes, a map over their particles, a
-- sequential loop over the home box and its neighbours, and a reduction over each neighbour's particles.
--
-- Generate the data files first: python futhark_examples/gen_data.py lavamd
-- ==
-- entry: main
-- "ci" ci input @ data/lavamd-ci.in output @ data/lavamd-ci.out
-- "D1" paper notune input @ data/lavamd-D1.in output @ data/lavamd-D1.out
-- "D2" paper notune input @ data/lavamd-D2.in output @ data/lavamd-D2.out
-- "train-D1" train input @ data/lavamd-train-D1.in output @ data/lavamd-train-D1.out
-- "train-D2" train input @ data/lavamd-train-D2.in output @ data/lavamd-train-D2.out

-- A particle: v (Rodinia's name; a per-particle term of the squared distance), the position x, y, z.
type particle = (f32, f32, f32, f32)

-- Potential and force (v, x, y, z) summed over several sources.
def add4 (a1: f32, a2: f32, a3: f32, a4: f32) (b1: f32, b2: f32, b3: f32, b4: f32): (f32, f32, f32, f32) =
  (a1 + b1, a2 + b2, a3 + b3, a4 + b4)

-- The potential and the force that particle b with charge q exerts on particle a.
def interaction (a2: f32) ((av, ax, ay, az): particle) ((bv, bx, by, bz): particle) (q: f32): (f32, f32, f32, f32) =
  let r2 = av + bv - (ax * bx + ay * by + az * bz)
  let vij = f32.exp (-(a2 * r2))
  let fs = 2 * vij
  in (q * vij, q * fs * (ax - bx), q * fs * (ay - by), q * fs * (az - bz))

entry main [number_boxes][par_per_box][num_neighbors]
           (alpha: f32)
           (box_nnghs: [num_neighbors][number_boxes]i32)
           (box_num_nghbs: [number_boxes]i32)
           (rv_v: [number_boxes][par_per_box]f32)
           (rv_x: [number_boxes][par_per_box]f32)
           (rv_y: [number_boxes][par_per_box]f32)
           (rv_z: [number_boxes][par_per_box]f32)
           (qv: [number_boxes][par_per_box]f32)
           : ([number_boxes][par_per_box]f32, [number_boxes][par_per_box]f32,
              [number_boxes][par_per_box]f32, [number_boxes][par_per_box]f32) =
  let a2 = 2 * alpha * alpha
  let particles (box: i64) = zip4 rv_v[box] rv_x[box] rv_y[box] rv_z[box]
  let forces =
    map2 (\(home: i64) num_nghbs ->
            map (\(a: particle) ->
                   loop acc = (0, 0, 0, 0) for k < i64.i32 num_nghbs + 1 do
                     let box = if k == 0 then home else i64.i32 box_nnghs[k-1, home]
                     let from_box = reduce add4 (0, 0, 0, 0) (map2 (interaction a2 a) (particles box) qv[box])
                     in add4 acc from_box)
                 (particles home))
         (iota number_boxes) box_num_nghbs
  in unzip4 (map unzip4 forces)

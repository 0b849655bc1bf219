-- Rodinia's nearest neighbour (nn): the k records nearest to a query point (lat, lng) among n records, in
-- order of increasing distance. The distances are one map over the records; then k rounds, each a
-- reduction (the argmin of the distances, ties to the lower index) and an in-place update that takes the
-- record found out of the running. The parallelism is the map and the reductions; the rounds are a
-- sequential loop around them.
--
-- Generate the data files first: python futhark_examples/gen_data.py nn
-- ==
-- entry: main
-- "ci" ci input @ data/nn-ci.in output @ data/nn-ci.out
-- "D1" paper notune input @ data/nn-D1.in output @ data/nn-D1.out
-- "train-D1" train input @ data/nn-train-D1.in output @ data/nn-train-D1.out

-- The nearer of two (distance, index) candidates; on equal distances the lower index, so the reduction is
-- commutative and its result does not depend on the order the device combines in.
def nearer (d1: f32, i1: i64) (d2: f32, i2: i64): (f32, i64) =
  if d1 < d2 then (d1, i1)
  else if d2 < d1 then (d2, i2)
  else if i1 < i2 then (d1, i1)
  else (d2, i2)

entry main [n] (k: i64) (lat: f32) (lng: f32)
               (locations_lat: [n]f32) (locations_lng: [n]f32): ([k]i32, [k]f32) =
  let distances = map2 (\lat_i lng_i -> f32.sqrt ((lat - lat_i) * (lat - lat_i) + (lng - lng_i) * (lng - lng_i)))
                       locations_lat locations_lng
  let (found_at, found_dist, _) =
    loop (found_at, found_dist, distances) = (replicate k 0i32, replicate k 0f32, distances) for i < k do
      let (min_dist, min_at) = reduce_comm nearer (f32.inf, 0) (zip distances (iota n))
      let distances[min_at] = f32.inf
      let found_at[i] = i32.i64 min_at
      let found_dist[i] = min_dist
      in (found_at, found_dist, distances)
  in (found_at, found_dist)

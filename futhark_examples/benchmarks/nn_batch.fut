-- The batched nearest neighbour of the PPoPP'19 paper (Rodinia's nn, many queries at once): for each of N
-- independent queries (lat, lng), each with its own M records, the k records nearest to it in order of
-- increasing distance. One query is Rodinia's nn: a map computing the distances, then k rounds of an argmin
-- reduction and an in-place update taking the record found out of the running. The outer map over the
-- queries holds that loop of reductions: with few large queries the parallelism is inside (the reductions),
-- with many small ones outside (one query per thread).
--
-- Generate the data files first: python futhark_examples/gen_data.py nn_batch
-- ==
-- entry: main
-- "ci" ci input @ data/nn_batch-ci.in output @ data/nn_batch-ci.out
-- "D1" paper notune input @ data/nn_batch-D1.in output @ data/nn_batch-D1.out
-- "D2" paper notune input @ data/nn_batch-D2.in output @ data/nn_batch-D2.out
-- "train-D1" train input @ data/nn_batch-train-D1.in output @ data/nn_batch-train-D1.out
-- "train-D2" train input @ data/nn_batch-train-D2.in output @ data/nn_batch-train-D2.out

-- The nearer of two (distance, index) candidates; on equal distances the lower index, so the reduction is
-- commutative and its result does not depend on the order the device combines in.
def nearer (d1: f32, i1: i64) (d2: f32, i2: i64): (f32, i64) =
  if d1 < d2 then (d1, i1)
  else if d2 < d1 then (d2, i2)
  else if i1 < i2 then (d1, i1)
  else (d2, i2)

-- One query: the indices and distances of its k nearest records.
def nearest [m] (k: i64) (lat: f32) (lng: f32) (locations_lat: [m]f32) (locations_lng: [m]f32): ([k]i32, [k]f32) =
  let distances = map2 (\lat_i lng_i -> f32.sqrt ((lat - lat_i) * (lat - lat_i) + (lng - lng_i) * (lng - lng_i)))
                       locations_lat locations_lng
  let (found_at, found_dist, _) =
    loop (found_at, found_dist, distances) = (replicate k 0i32, replicate k 0f32, distances) for i < k do
      let (min_dist, min_at) = reduce_comm nearer (f32.inf, 0) (zip distances (iota m))
      let distances[min_at] = f32.inf
      let found_at[i] = i32.i64 min_at
      let found_dist[i] = min_dist
      in (found_at, found_dist, distances)
  in (found_at, found_dist)

entry main [n][m] (k: i64) (lats: [n]f32) (lngs: [n]f32)
                  (locations_lats: [n][m]f32) (locations_lngs: [n][m]f32): ([n][k]i32, [n][k]f32) =
  unzip (map4 (nearest k) lats lngs locations_lats locations_lngs)

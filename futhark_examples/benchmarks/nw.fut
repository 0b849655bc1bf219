-- Rodinia's Needleman-Wunsch: the score matrix of a global alignment of two sequences. Cell (i, j) is the best
-- of its north-west neighbour plus the similarity of the two letters and its north or west neighbour minus a
-- gap penalty. Blocked as in Rodinia: a sequential loop over the anti-diagonals of 16 x 16 blocks, a map over
-- the blocks of one anti-diagonal, and in each block a loop over its own anti-diagonals (a map over the block's
-- cells); then the matrix is rebuilt with the new blocks. The first row and column hold the gap penalties.
-- The matrix side minus one must be a multiple of 16.
--
-- Generate the data files first: python futhark_examples/gen_data.py nw
-- ==
-- entry: main
-- "ci" ci input @ data/nw-ci.in output @ data/nw-ci.out
-- "ci-49" ci input @ data/nw-ci-49.in output @ data/nw-ci-49.out
-- "train-D1" train input @ data/nw-train-D1.in output @ data/nw-train-D1.out
-- "D1" paper notune input @ data/nw-D1.in output @ data/nw-D1.out
-- "D2" paper notune input @ data/nw-D2.in output @ data/nw-D2.out

def block_size: i64 = 16

-- The cells of one block, from the row above it (`corner`, then `above`), the column left of it and the
-- similarities of its cells; anti-diagonal m of the block is filled in step m.
def fill_block [b] (penalty: i32) (corner: i32) (above: [b]i32) (left: [b]i32) (sims: [b][b]i32): [b][b]i32 =
  loop blk = replicate b (replicate b 0i32) for m < 2 * b - 1 do
    map (\i -> map (\j ->
           if i + j != m then blk[i, j]
           else let diagonal = if i == 0 then (if j == 0 then corner else above[j - 1])
                               else if j == 0 then left[i - 1] else blk[i - 1, j - 1]
                let north = if i == 0 then above[j] else blk[i - 1, j]
                let west = if j == 0 then left[i] else blk[i, j - 1]
                in i32.max (diagonal + sims[i, j]) (i32.max (west - penalty) (north - penalty)))
         (iota b)) (iota b)

entry main [side] (penalty: i32) (itemsets: [side][side]i32) (sims: [side][side]i32): [side][side]i32 =
  let b = block_size
  let nb = assert ((side - 1) % b == 0) ((side - 1) / b)
  in loop mat = itemsets for d < 2 * nb - 1 do
       let first = i64.max 0 (d - nb + 1)
       let count = i64.min d (nb - 1) - first + 1
       let blocks = map (\k -> let r0 = (first + k) * b
                               let c0 = (d - first - k) * b
                               in fill_block penalty mat[r0, c0] (mat[r0, c0 + 1:c0 + 1 + b] :> [b]i32)
                                             (mat[r0 + 1:r0 + 1 + b, c0] :> [b]i32)
                                             (sims[r0 + 1:r0 + 1 + b, c0 + 1:c0 + 1 + b] :> [b][b]i32))
                        (iota count)
       in tabulate_2d side side (\r c ->
            let bi = (r - 1) / b
            let bj = (c - 1) / b
            in if r > 0 && c > 0 && bi + bj == d then blocks[bi - first, (r - 1) % b, (c - 1) % b]
               else mat[r, c])

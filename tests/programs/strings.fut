-- String and character literals: a string is the array of its UTF-8 bytes ([]u8), escapes decoded as Futhark
-- decodes them; a character is the integer of its code point, typed by its use as an unsuffixed literal is;
-- character patterns in a match; strings inside a map (a kernel) and compared with ==.
-- ==
-- entry: bytes
-- input { 0i64 }
-- output { [104u8, 195u8, 169u8, 10u8, 34u8, 9u8, 92u8, 39u8, 65u8, 66u8, 67u8, 206u8, 187u8] 0i64 1i64 }

-- ==
-- entry: digits
-- input { [49u8, 120u8, 55u8, 57u8, 32u8] }
-- output { [1, 0, 7, 9, 0] 3i64 }

-- ==
-- entry: classify
-- input { [97, 113, 10, 955, 48] }
-- output { [1, 2, 3, 4, 0] 955u32 92i64 }

entry bytes (i: i64) : ([]u8, i64, i64) =
  let s = "hé\n\"\t\\\'\65\x42\o103λ"
  in (s, length "" + i, length ("" ++ "x"))

def is_digit (c: u8) = c >= '0' && c <= '9'

entry digits (cs: []u8) : ([]i32, i64) =
  (map (\c -> if is_digit c then i32.u8 (c - '0') else 0) cs,
   i64.sum (map (\c -> if is_digit c then 1 else 0) cs))

entry classify (cs: []i32) : ([]i32, u32, i64) =
  let f c = match c
            case 'a' -> 1
            case 'q' -> 2
            case '\n' -> 3
            case 'λ' -> 4
            case _ -> 0
  in (map f cs, 'λ', i64.u8 (if "ab" == "ab" && "ab" != "ac" then '\\' else 0))

//! Steps over million-item lists that would otherwise run on one core while the others
//! wait: the distinct texts of a list, and gathering per-part vectors into one.

use std::hash::Hasher;
use std::mem::MaybeUninit;

use rayon::prelude::*;

use crate::cluster::fx::Fx;

/// The distinct texts among `items` in first-seen order, and each item's position among
/// them (`u32::MAX` for an item whose `text` is `None`). Agents write the same lesson word for
/// word again and again, so the costly per-text steps run once per distinct text. Found by
/// sorting (hash, item) pairs on every core; texts with one hash are still compared as texts.
/// First-seen order keeps texts that are used together near each other in memory.
pub fn first_seen<'a, 's, T: Sync>(
    items: &'a [T],
    text: impl Fn(&'a T) -> Option<&'s str> + Sync,
) -> (Vec<u32>, Vec<&'s str>) {
    let mut hashed: Vec<(u64, u32)> = (items.par_iter().enumerate())
        .filter_map(|(i, item)| {
            let t = text(item)?;
            let mut h = Fx::default();
            h.write(t.as_bytes());
            Some((h.finish(), i as u32))
        })
        .collect();
    hashed.par_sort_unstable();
    // Each item's leader, the first item with its text: in a run of one hash (sorted by
    // item), the first member with each text. A run almost always holds one text, which needs
    // no list of texts (a list per run was a million small allocations to make and free).
    let text = &text;
    let leaders: Vec<(u32, u32)> = hashed
        .par_chunk_by(|a, b| a.0 == b.0)
        .flat_map_iter(|run| {
            let first = run[0].1;
            let first_text = text(&items[first as usize]).unwrap_or_default();
            // The run's other texts with their leaders, in the rare run that has any.
            let mut others: Vec<(u32, &str)> = Vec::new();
            run.iter().map(move |&(_, i)| {
                let t = text(&items[i as usize]).unwrap_or_default();
                if i == first || t == first_text {
                    return (i, first);
                }
                let leader = match others.iter().find(|o| o.1 == t) {
                    Some(o) => o.0,
                    None => {
                        others.push((i, t));
                        i
                    }
                };
                (i, leader)
            })
        })
        .collect();
    drop(hashed);
    let mut position = vec![u32::MAX; items.len()];
    for &(i, leader) in &leaders {
        position[i as usize] = leader;
    }
    drop(leaders);
    // In item order a text's leader comes before its other items: it takes the next number,
    // and each later item the number its leader took.
    let mut texts = Vec::new();
    for i in 0..position.len() {
        let leader = position[i];
        if leader == u32::MAX {
            continue;
        }
        position[i] = if leader as usize == i {
            texts.push(text(&items[i]).unwrap_or_default());
            (texts.len() - 1) as u32
        } else {
            position[leader as usize]
        };
    }
    (position, texts)
}

/// The parts' items in one vector, in order, moved on every core. Gathering a million
/// two-hundred-byte records on one core is a quarter of a second of copying into fresh pages.
pub fn concat<T: Send>(parts: Vec<Vec<T>>) -> Vec<T> {
    let total = parts.iter().map(Vec::len).sum();
    let mut out: Vec<T> = Vec::with_capacity(total);
    let mut rest = &mut out.spare_capacity_mut()[..total];
    let mut places: Vec<&mut [MaybeUninit<T>]> = Vec::with_capacity(parts.len());
    for part in &parts {
        let (place, after) = std::mem::take(&mut rest).split_at_mut(part.len());
        places.push(place);
        rest = after;
    }
    places.into_par_iter().zip(parts).for_each(|(place, part)| {
        for (slot, item) in place.iter_mut().zip(part) {
            slot.write(item);
        }
    });
    // SAFETY: the places split the first `total` slots of the spare capacity between the
    // parts, each exactly as long as its part, and every item was written to its slot above.
    unsafe { out.set_len(total) };
    out
}

/// Room for one part's items inside the vector `in_place` builds: items pushed past the room
/// wait in a spill of their own.
pub struct Room<T> {
    /// The first of this room's slots in the vector's spare capacity.
    at: *mut T,
    room: usize,
    /// Items written at `at`; the room owns them until `in_place` moves them.
    len: usize,
    spill: Vec<T>,
}

// SAFETY: a room's slots belong to it alone (`in_place` hands out disjoint ranges), and items
// of `T: Send` may move to another thread with it.
unsafe impl<T: Send> Send for Room<T> {}

impl<T> Room<T> {
    pub fn push(&mut self, item: T) {
        if self.len < self.room {
            // SAFETY: slot `len` < `room` is one of this room's slots, not yet written.
            unsafe { self.at.add(self.len).write(item) };
            self.len += 1;
        } else {
            self.spill.push(item);
        }
    }

    /// Items pushed so far.
    pub fn len(&self) -> usize {
        self.len + self.spill.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> Drop for Room<T> {
    /// Items still in the room (a fill that panicked): dropped where they are.
    fn drop(&mut self) {
        let written = std::ptr::slice_from_raw_parts_mut(self.at, self.len);
        self.len = 0;
        // SAFETY: the first `len` slots hold items the room owns, dropped once (`len` is 0 now).
        unsafe { std::ptr::drop_in_place(written) };
    }
}

/// The items `fill` pushes into each of `rooms.len()` parts, in part order, in one vector,
/// and what each `fill` returns; the parts are filled on every core. Each part pushes into
/// its own range of the vector, `rooms[k]` slots long, so its items are written once where
/// they stay or close by: gathering per-part vectors into one (`concat`) copied every item
/// again, into fresh pages. After the fill each part's items move down to follow the part
/// before's, within the pages just written; when a part pushed more than its room and the
/// extra would reach past its range, everything is gathered into a new vector instead.
pub fn in_place<T: Send, P: Send>(
    rooms: &[usize],
    fill: impl Fn(usize, &mut Room<T>) -> P + Sync + Send,
) -> (Vec<T>, Vec<P>) {
    let capacity: usize = rooms.iter().sum();
    let mut out: Vec<T> = Vec::with_capacity(capacity);
    let base = out.as_mut_ptr();
    let mut ends = Vec::with_capacity(rooms.len());
    let mut start = 0;
    let mut places: Vec<Room<T>> = (rooms.iter())
        .map(|&room| {
            // SAFETY: `start + room` <= `capacity`, within (or one past) the allocation.
            let at = unsafe { base.add(start) };
            start += room;
            ends.push(start);
            Room {
                at,
                room,
                len: 0,
                spill: Vec::new(),
            }
        })
        .collect();
    let made: Vec<P> = (places.par_iter_mut().enumerate())
        .map(|(k, place)| fill(k, place))
        .collect();
    let total: usize = places.iter().map(Room::len).sum();
    // In place when every part's items, after the parts' before them, end within its range.
    let mut end = 0;
    let fits = places.iter().zip(&ends).all(|(place, &range_end)| {
        end += place.len();
        end <= range_end
    });
    let mut moved: Vec<T> = if fits { out } else { Vec::with_capacity(total) };
    let to = moved.as_mut_ptr();
    let mut at = 0;
    for place in &mut places {
        let written = std::mem::replace(&mut place.len, 0);
        // SAFETY: the place's first `written` slots hold its items; `to + at` is where the
        // parts' items so far end. In place, `at + written` stays within the part's range
        // (checked above), so the copy overwrites only moved items and its own (a `copy` may
        // overlap); otherwise `moved` is a new vector with room for every item. The items are
        // the new vector's now: the place's `len` is 0, so it drops none of them.
        unsafe { std::ptr::copy(place.at, to.add(at), written) };
        at += written;
        for item in std::mem::take(&mut place.spill) {
            // SAFETY: as above, `at` < the part's range end (or the new vector's capacity).
            unsafe { to.add(at).write(item) };
            at += 1;
        }
    }
    // SAFETY: the first `at` slots of `moved` hold every part's items, written above.
    unsafe { moved.set_len(at) };
    (moved, made)
}

/// The parts' items in one vector, the `g`-th of them (counting part by part) at `to[g]`, moved
/// on every core: a gather and a reordering in one move of each item, where `concat` and a
/// permutation moved each twice. `out`'s memory is used when it has room (its items are
/// dropped): a vector of that size freed just before would otherwise be faulted in afresh.
/// Panics unless `to` is a permutation of the items' positions.
pub fn scatter<T: Send>(mut out: Vec<T>, parts: Vec<Vec<T>>, to: &[u32]) -> Vec<T> {
    let total: usize = parts.iter().map(Vec::len).sum();
    let mut hit = vec![false; total];
    let permutation = to.len() == total
        && to.iter().all(|&t| {
            hit.get_mut(t as usize)
                .is_some_and(|h| !std::mem::replace(h, true))
        });
    assert!(permutation, "scatter needs a permutation of the items' positions");
    drop(hit);
    out.clear();
    if out.capacity() < total {
        // Freed before the new one is taken.
        out = Vec::new();
        out.reserve_exact(total);
    }
    let slots = Slots(out.as_mut_ptr());
    let mut start = 0;
    let starts: Vec<usize> = (parts.iter())
        .map(|p| {
            start += p.len();
            start - p.len()
        })
        .collect();
    parts.into_par_iter().zip(starts).for_each(|(part, start)| {
        let slots = &slots;
        for (item, &at) in part.into_iter().zip(&to[start..]) {
            // SAFETY: `at` < `total` <= the capacity, and `to` is a permutation (checked
            // above), so every slot is written exactly once, by one thread.
            unsafe { slots.0.add(at as usize).write(item) };
        }
    });
    // SAFETY: all `total` slots were written above.
    unsafe { out.set_len(total) };
    out
}

/// The items grouped by key (a counting sort, stable: each key's items keep their order), and
/// where each group starts: key `k`'s items are `grouped[starts[k]..starts[k + 1]]`, so a
/// group is a range of one vector instead of a vector of its own. Panics on a key `>= keys`.
pub fn group_by_key<T: Copy + Default>(
    keys: usize,
    items: impl Iterator<Item = (usize, T)> + Clone,
) -> (Vec<u32>, Vec<T>) {
    let mut starts = vec![0u32; keys + 1];
    for (k, _) in items.clone() {
        starts[k + 1] += 1;
    }
    for k in 1..starts.len() {
        starts[k] += starts[k - 1];
    }
    let mut next = starts.clone();
    let mut grouped = vec![T::default(); starts[keys] as usize];
    for (k, item) in items {
        grouped[next[k] as usize] = item;
        next[k] += 1;
    }
    (starts, grouped)
}

/// The slots `scatter` writes, shared by its threads (each slot is written by one).
struct Slots<T>(*mut T);

// SAFETY: `scatter`'s threads write disjoint slots of one allocation; items of `T: Send` move
// to another thread.
unsafe impl<T: Send> Sync for Slots<T> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_texts_in_first_seen_order() {
        let items = [
            Some("Pin the base image digest in the Dockerfile"),
            Some("Run npm ci instead of npm install in CI"),
            Some("Pin the base image digest in the Dockerfile"),
            None,
            Some("Run npm ci instead of npm install in CI"),
            Some("Pin the base image digest in the dockerfile"),
            Some(""),
            // The hash reads a zero-padded tail without the length: these two collide with
            // "go" and must still come out as texts of their own.
            Some("go\0"),
            Some("go"),
            // A third text of that hash, met between repeats of the other two.
            Some("go\0"),
            Some("go\0\0"),
            Some("go"),
            Some("go\0\0"),
        ];
        let (position, texts) = first_seen(&items, |t| *t);
        assert_eq!(
            texts,
            vec![
                "Pin the base image digest in the Dockerfile",
                "Run npm ci instead of npm install in CI",
                "Pin the base image digest in the dockerfile",
                "",
                "go\0",
                "go",
                "go\0\0",
            ]
        );
        assert_eq!(position, vec![0, 1, 0, u32::MAX, 1, 2, 3, 4, 5, 4, 6, 5, 6]);
    }

    #[test]
    fn many_texts_each_found_once() {
        // Enough texts that the hash runs split across threads.
        let items: Vec<String> = (0..50_000).map(|i| format!("lesson {}", i % 7919)).collect();
        let (position, texts) = first_seen(&items, |s| Some(s.as_str()));
        assert_eq!(texts.len(), 7919);
        assert_eq!(texts[..3], ["lesson 0", "lesson 1", "lesson 2"]);
        for (i, s) in items.iter().enumerate() {
            assert_eq!(texts[position[i] as usize], s);
        }
    }

    /// Forty parts of uneven length (some empty), each item naming its part and place.
    fn uneven_parts() -> Vec<Vec<String>> {
        (0..40)
            .map(|p| (0..(p * 37) % 101).map(|i| format!("{p}:{i}")).collect())
            .collect()
    }

    #[test]
    fn concat_keeps_order_and_every_item() {
        let parts = uneven_parts();
        let expected: Vec<String> = parts.concat();
        assert_eq!(concat(parts), expected);
        assert!(concat(Vec::<Vec<u8>>::new()).is_empty());
        assert_eq!(concat(vec![vec![], vec![1], vec![], vec![2, 3]]), vec![1, 2, 3]);
    }

    /// `in_place` against `concat` of the same parts: `counts[k]` items pushed into a room of
    /// `rooms[k]`, each naming its part and place.
    fn in_place_matches_concat(rooms: &[usize], counts: &[usize]) {
        let made = |k: usize| (0..counts[k]).map(move |i| format!("{k}:{i}"));
        let (items, lens) = in_place(rooms, |k, room| {
            made(k).for_each(|item| room.push(item));
            room.len()
        });
        let expected: Vec<String> = (0..rooms.len()).flat_map(made).collect();
        assert_eq!(items, expected);
        assert_eq!(lens, counts);
    }

    #[test]
    fn in_place_keeps_order_and_every_item() {
        // Rooms of two items a record, runs averaging about 1.7 (the candidates' case), some
        // empty, one part overfull but with room left by the parts before it.
        let rooms: Vec<usize> = (0..40).map(|p| 2 * ((p * 37) % 101)).collect();
        let counts: Vec<usize> = (0..40).map(|p| ((p * 37) % 101) * 17 / 10).collect();
        in_place_matches_concat(&rooms, &counts);
        let mut over = counts.clone();
        over[5] = rooms[5] + 3;
        assert!(over[..6].iter().sum::<usize>() <= rooms[..6].iter().sum());
        in_place_matches_concat(&rooms, &over);
        in_place_matches_concat(&[], &[]);
        in_place_matches_concat(&[0, 0, 4], &[0, 0, 0]);
    }

    #[test]
    fn in_place_gathers_anew_when_a_part_overflows_its_range() {
        // The first part overfull: its spill would reach the second part's items.
        in_place_matches_concat(&[4, 4, 4], &[7, 4, 1]);
        // Rooms of nothing: every item spilt.
        in_place_matches_concat(&[0, 0, 0], &[2, 0, 5]);
        // The last part overfull.
        in_place_matches_concat(&[4, 4], &[4, 9]);
    }

    #[test]
    fn in_place_drops_every_item_once_when_a_part_panics() {
        use std::sync::Arc;
        let alive = Arc::new(());
        let result = std::panic::catch_unwind(|| {
            in_place(&[3, 3, 3], |k, room| {
                for _ in 0..5 {
                    room.push(alive.clone());
                }
                assert!(k != 1, "a part that fails");
            })
        });
        assert!(result.is_err());
        assert_eq!(Arc::strong_count(&alive), 1);
    }

    #[test]
    fn scatter_places_every_item_once() {
        let parts = uneven_parts();
        let flat: Vec<String> = parts.concat();
        let n = flat.len() as u32;
        let to: Vec<u32> = (0..n).map(|g| (g * 7919) % n).collect();
        let mut expected = vec![String::new(); flat.len()];
        for (g, s) in flat.iter().enumerate() {
            expected[to[g] as usize] = s.clone();
        }
        // Into a vector with room (its items dropped) and into one without.
        let roomy = vec!["old".to_string(); flat.len() + 3];
        assert_eq!(scatter(roomy, parts.clone(), &to), expected);
        assert_eq!(scatter(Vec::new(), parts, &to), expected);
        assert!(scatter(Vec::<u8>::new(), Vec::new(), &[]).is_empty());
    }

    #[test]
    fn group_by_key_keeps_each_keys_items_in_order() {
        // Keys out of order, one key with no items, one item at the last key.
        let items = [(2, 'a'), (0, 'b'), (2, 'c'), (4, 'd'), (0, 'e'), (2, 'f')];
        let (starts, grouped) = group_by_key(5, items.iter().copied());
        assert_eq!(starts, vec![0, 2, 2, 5, 5, 6]);
        assert_eq!(grouped, vec!['b', 'e', 'a', 'c', 'f', 'd']);
        let group = |k: usize| &grouped[starts[k] as usize..starts[k + 1] as usize];
        assert_eq!(group(2), &['a', 'c', 'f']);
        assert!(group(1).is_empty() && group(3).is_empty());
        let (starts, grouped) = group_by_key(3, std::iter::empty::<(usize, u8)>());
        assert_eq!((starts, grouped), (vec![0; 4], vec![]));
    }

    #[test]
    #[should_panic(expected = "permutation")]
    fn scatter_refuses_a_repeated_place() {
        scatter(Vec::new(), vec![vec![1, 2], vec![3]], &[0, 2, 2]);
    }
}

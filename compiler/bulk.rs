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

/// `items` reordered in their own memory, the `i`-th to `to[i]`: what `scatter` does without
/// a second vector to hold them all. Each item moves once, to its place, by a swap with the
/// item there (which is then the next one placed, until a cycle of places closes). One core:
/// the cycles cross the whole vector. Panics unless `to` is a permutation of the items'
/// positions.
pub fn permute<T>(items: &mut [T], mut to: Vec<u32>) {
    let mut hit = vec![false; items.len()];
    let permutation = to.len() == items.len()
        && to.iter().all(|&t| {
            hit.get_mut(t as usize)
                .is_some_and(|h| !std::mem::replace(h, true))
        });
    assert!(permutation, "permute needs a permutation of the items' positions");
    drop(hit);
    for i in 0..items.len() {
        // The item at `i` goes to `t`; the one from `t`, now at `i`, goes where `to[t]` said.
        // Every place below `i` holds its item already, so `t` >= `i`, and each swap fills
        // one more place for good: at most one swap an item.
        loop {
            let t = to[i] as usize;
            if t == i {
                break;
            }
            items.swap(i, t);
            to.swap(i, t);
        }
    }
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
    fn permute_places_every_item_as_scatter_does() {
        // Cycles of every length (a multiplier's orbits), items already in place, one long
        // cycle, and the empty and one-item vectors: each against `scatter` of the same items.
        let flat: Vec<String> = uneven_parts().concat();
        let n = flat.len() as u32;
        let by_multiplier: Vec<u32> = (0..n).map(|g| (g * 7919) % n).collect();
        let in_place: Vec<u32> = (0..n).collect();
        let one_cycle: Vec<u32> = (0..n).map(|g| (g + 1) % n).collect();
        let halves: Vec<u32> = (0..n)
            .map(|g| if g % 2 == 0 { g } else { n - n % 2 - g })
            .collect();
        for to in [by_multiplier, in_place, one_cycle, halves] {
            let expected = scatter(Vec::new(), vec![flat.clone()], &to);
            let mut items = flat.clone();
            permute(&mut items, to);
            assert_eq!(items, expected);
        }
        let mut none: Vec<String> = Vec::new();
        permute(&mut none, Vec::new());
        assert!(none.is_empty());
        let mut one = vec!["a"];
        permute(&mut one, vec![0]);
        assert_eq!(one, ["a"]);
    }

    #[test]
    #[should_panic(expected = "permutation")]
    fn permute_refuses_a_place_outside() {
        permute(&mut [1, 2, 3], vec![0, 3, 1]);
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

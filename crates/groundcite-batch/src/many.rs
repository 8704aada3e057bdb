//! A batch held in memory: one result per item, in input order.

use std::sync::{Mutex, PoisonError};

use groundcite_core::Contract;

use crate::{LineError, Options, Request, verify_line, verify_request};

/// Verifies `items` on [`Options::threads`] std threads and returns one
/// result per item, in input order. A [`LineError`]'s `line` is the item's
/// 1-based position.
pub fn verify_many(items: Vec<Request>, options: &Options) -> Vec<Result<Contract, LineError>> {
    parallel_map(items, options.threads(), |i, request| {
        verify_request(request, i + 1, options)
    })
}

/// Verifies JSON documents of [`Request`]s (each one batch line's bytes) on
/// [`Options::threads`] std threads, through the same fast and slow parsers
/// as [`verify_line`], and returns one result per document, in input order:
/// `Ok(None)` for a blank one. A [`LineError`]'s `line` is the document's
/// 1-based position.
pub fn verify_many_json<L: AsRef<[u8]> + Sync>(
    documents: &[L],
    options: &Options,
) -> Vec<Result<Option<Contract>, LineError>> {
    parallel_map(documents.iter().collect(), options.threads(), |i, doc| {
        verify_line(doc.as_ref(), i + 1, options)
    })
}

/// `items` mapped through `f(index, item)` by up to `jobs` scoped threads,
/// each taking the next item as it finishes one; results in input order.
fn parallel_map<T: Send, R: Send>(
    items: Vec<T>,
    jobs: usize,
    f: impl Fn(usize, T) -> R + Sync,
) -> Vec<R> {
    let n = items.len();
    let jobs = jobs.min(n);
    if jobs <= 1 {
        return items
            .into_iter()
            .enumerate()
            .map(|(i, x)| f(i, x))
            .collect();
    }
    let queue = Mutex::new(items.into_iter().enumerate());
    let mut slots: Vec<Option<R>> = std::iter::repeat_with(|| None).take(n).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..jobs)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        // The lock is held only to take an item, never
                        // while verifying: a panic cannot poison it.
                        let next = queue.lock().unwrap_or_else(PoisonError::into_inner).next();
                        let Some((i, item)) = next else { break };
                        done.push((i, f(i, item)));
                    }
                    done
                })
            })
            .collect();
        for h in handles {
            match h.join() {
                Ok(done) => {
                    for (i, r) in done {
                        slots[i] = Some(r);
                    }
                }
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
    });
    // Every index was taken exactly once, so every slot is filled.
    slots.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::parallel_map;

    #[test]
    fn parallel_map_keeps_order_whatever_the_timing() {
        for jobs in [0, 1, 2, 7, 64] {
            let items: Vec<u64> = (0..200).collect();
            let out = parallel_map(items, jobs, |i, x| {
                // Uneven work, so that threads finish out of order.
                if x % 7 == 0 {
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
                (i, x * 2)
            });
            assert_eq!(out.len(), 200);
            for (k, (i, x)) in out.into_iter().enumerate() {
                assert_eq!((i, x), (k, 2 * k as u64), "jobs {jobs}");
            }
        }
        assert!(parallel_map(Vec::<u8>::new(), 4, |_, x| x).is_empty());
    }
}

//! Finding values in a tree: `asdf_value_find` and the find iterator, breadth-first by default
//! or depth-first, with a predicate for the containers to descend into and a depth limit, in
//! libasdf's order (the root first; a container beyond the limit, or one the descend
//! predicate refuses, is neither entered nor yielded).

use std::collections::VecDeque;

use asdf_yaml::{NodeKind, Step};

use crate::util::guard;
use crate::value::{Value, asdf_value_copy, asdf_value_destroy};

/// `asdf_value_pred_t`.
pub type Pred = Option<unsafe extern "C" fn(*mut Value) -> bool>;

/// `asdf_find_iter_t`'s public part, then the state.
#[repr(C)]
#[derive(Debug)]
pub struct FindIter {
    value: *mut Value,
    root: *mut Value,
    /// The paths (from the root) of the values to offer the predicate, in order.
    order: std::vec::IntoIter<Vec<Step>>,
    pred: Pred,
}

/// Calls a predicate on the value at `path` below `root` (a handle made and freed here).
fn test(root: &Value, path: &[Step], pred: Pred) -> bool {
    let Some(p) = pred else { return true };
    let v = root.descendant(path);
    if v.is_null() {
        return false;
    }
    // SAFETY: `p` is the caller's predicate, given a live value it may read.
    let r = unsafe { p(v) };
    // SAFETY: made above, freed once.
    unsafe { asdf_value_destroy(v) };
    r
}

/// The children of the container at `path`: (their steps, whether each is a container).
fn children(root: &Value, path: &[Step]) -> Vec<(Step, bool)> {
    let Some(n) = root.node_below(path) else {
        return Vec::new();
    };
    match &n.kind {
        NodeKind::Mapping(m) => m
            .entries
            .iter()
            .enumerate()
            .map(|(i, _)| {
                (
                    Step::Entry(i),
                    root.is_container_below(&[path, &[Step::Entry(i)]].concat()),
                )
            })
            .collect(),
        NodeKind::Sequence(q) => (0..q.items.len())
            .map(|i| {
                (
                    Step::Item(i),
                    root.is_container_below(&[path, &[Step::Item(i)]].concat()),
                )
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Whether the container at `path` is one of its own ancestors (an alias to an anchor above
/// it: `a: &s [1, *s]`), so that entering it again would never end.
fn cyclic(root: &Value, path: &[Step]) -> bool {
    let Some(me) = root.node_below(path).map(std::ptr::from_ref) else {
        return false;
    };
    (0..path.len()).any(|k| root.node_below(&path[..k]).map(std::ptr::from_ref) == Some(me))
}

/// The paths of the values to offer, in libasdf's order.
fn order(root: &Value, depth_first: bool, descend: Pred, max_depth: isize) -> Vec<Vec<Step>> {
    let mut out = vec![Vec::new()];
    let enter = |path: &[Step], depth: isize| -> bool {
        !(cyclic(root, path) || max_depth >= 0 && depth > max_depth) && test(root, path, descend)
    };
    // A bound on the work: every node is visited once (aliases are not followed into a
    // container twice beyond this many steps).
    let mut budget: usize = 10_000_000;
    if depth_first {
        fn walk(
            root: &Value,
            path: &mut Vec<Step>,
            depth: isize,
            out: &mut Vec<Vec<Step>>,
            enter: &dyn Fn(&[Step], isize) -> bool,
            budget: &mut usize,
        ) {
            for (step, container) in children(root, path) {
                if *budget == 0 || path.len() > 10_000 {
                    return;
                }
                *budget -= 1;
                path.push(step);
                if container {
                    if enter(path, depth + 1) {
                        out.push(path.clone());
                        walk(root, path, depth + 1, out, enter, budget);
                    }
                } else {
                    out.push(path.clone());
                }
                path.pop();
            }
        }
        walk(root, &mut Vec::new(), 0, &mut out, &enter, &mut budget);
    } else {
        let mut queue: VecDeque<(Vec<Step>, isize)> = VecDeque::from([(Vec::new(), 0)]);
        while let Some((path, depth)) = queue.pop_front() {
            for (step, container) in children(root, &path) {
                if budget == 0 {
                    return out;
                }
                budget -= 1;
                let mut p = path.clone();
                p.push(step);
                if container {
                    if enter(&p, depth + 1) {
                        out.push(p.clone());
                        queue.push_back((p, depth + 1));
                    }
                } else {
                    out.push(p);
                }
            }
        }
    }
    out
}

/// A find iterator over the container `root` (NULL for a value that is not a container).
///
/// # Safety
/// `root` is NULL or a live value that outlives the iterator; the predicates are NULL or
/// functions taking a value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_find_iter_init_ex(
    root: *mut Value,
    pred: Pred,
    depth_first: bool,
    descend_pred: Pred,
    max_depth: isize,
) -> *mut FindIter {
    guard(std::ptr::null_mut(), || {
        // SAFETY: by the contract above.
        let Some(r) = (unsafe { root.as_ref() }) else {
            return std::ptr::null_mut();
        };
        if !r.is_container_below(&[]) {
            return std::ptr::null_mut();
        }
        Box::into_raw(Box::new(FindIter {
            value: std::ptr::null_mut(),
            root,
            order: order(r, depth_first, descend_pred, max_depth).into_iter(),
            pred,
        }))
    })
}

/// A breadth-first find iterator over every value below `root` (and `root`).
///
/// # Safety
/// As [`asdf_find_iter_init_ex`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_find_iter_init(root: *mut Value, pred: Pred) -> *mut FindIter {
    // SAFETY: by the contract above.
    unsafe { asdf_find_iter_init_ex(root, pred, false, None, -1) }
}

/// The next value the predicate accepts; at the end frees the iterator and sets `*iter` to
/// NULL.
///
/// # Safety
/// `iter` is NULL or points at NULL or a find iterator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_find_iter_next(iter: *mut *mut FindIter) -> bool {
    guard(false, || {
        if iter.is_null() {
            return false;
        }
        // SAFETY: by the contract above.
        let Some(it) = (unsafe { (*iter).as_mut() }) else {
            return false;
        };
        // SAFETY: the value made by the last step is the iterator's, freed once.
        unsafe { asdf_value_destroy(it.value) };
        it.value = std::ptr::null_mut();
        // SAFETY: the root outlives its iterators.
        if let Some(root) = unsafe { it.root.as_ref() } {
            for path in it.order.by_ref() {
                if test(root, &path, it.pred) {
                    it.value = root.descendant(&path);
                    return true;
                }
            }
        }
        // SAFETY: made by `Box::into_raw`, freed once; `iter` is writable.
        unsafe {
            drop(Box::from_raw(*iter));
            *iter = std::ptr::null_mut();
        }
        false
    })
}

impl Drop for FindIter {
    fn drop(&mut self) {
        // SAFETY: the iterator's current value is its own, freed once.
        unsafe { asdf_value_destroy(self.value) };
    }
}

/// Frees a find iterator.
///
/// # Safety
/// `iter` is NULL or a find iterator not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_find_iter_destroy(iter: *mut FindIter) {
    guard((), || {
        if !iter.is_null() {
            // SAFETY: made by `Box::into_raw`, freed once.
            drop(unsafe { Box::from_raw(iter) });
        }
    });
}

/// The first value the predicate accepts (a new handle), or NULL; a value that is not a
/// container is tested itself.
///
/// # Safety
/// As [`asdf_find_iter_init_ex`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_find_ex(
    root: *mut Value,
    pred: Pred,
    depth_first: bool,
    descend_pred: Pred,
    max_depth: isize,
) -> *mut Value {
    guard(std::ptr::null_mut(), || {
        // SAFETY: by the contract above.
        let Some(r) = (unsafe { root.as_ref() }) else {
            return std::ptr::null_mut();
        };
        if !r.is_container_below(&[]) {
            return if test(r, &[], pred) {
                // SAFETY: `root` is live.
                unsafe { asdf_value_copy(root) }
            } else {
                std::ptr::null_mut()
            };
        }
        // SAFETY: by the contract above.
        let mut it = unsafe { asdf_find_iter_init_ex(root, pred, depth_first, descend_pred, max_depth) };
        // SAFETY: `it` is NULL or the iterator just made.
        if unsafe { asdf_value_find_iter_next(&raw mut it) } {
            // SAFETY: `it` is live after a step that found a value.
            let found = unsafe { asdf_value_copy((*it).value) };
            // SAFETY: freed once.
            unsafe { asdf_find_iter_destroy(it) };
            found
        } else {
            std::ptr::null_mut()
        }
    })
}

/// The first value below `root` (breadth-first) the predicate accepts, or NULL.
///
/// # Safety
/// As [`asdf_find_iter_init_ex`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_find(root: *mut Value, pred: Pred) -> *mut Value {
    // SAFETY: by the contract above.
    unsafe { asdf_value_find_ex(root, pred, false, None, -1) }
}

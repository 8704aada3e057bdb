//! The extension module `groundcite._native`: argument conversion, the GIL
//! released around every verification, failures raised as the exceptions
//! of `groundcite.errors`. The public, typed API is the Python package
//! (`python/groundcite/`), which calls these functions.

use std::time::Instant;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyList, PyModule, PyString};

use crate::api::{self, Rules, Stamping};
use crate::input::{BadInput, Failure, utf8};

pyo3::import_exception!(groundcite.errors, InputError);
pyo3::import_exception!(groundcite.errors, CitationFormatError);

/// The Python exception for a failure: `InputError(message, source, path,
/// line, column)` or `CitationFormatError(message, answer_chars, chunks,
/// head, rejected, first_rejection)`.
fn to_pyerr(failure: Failure) -> PyErr {
    match failure {
        Failure::BadInput(b) => {
            InputError::new_err((b.message, b.source, b.path, b.line, b.column))
        }
        Failure::CitationFormat(e) => CitationFormatError::new_err((
            e.to_string(),
            e.answer_chars,
            e.chunks,
            e.head,
            e.rejected,
            e.first_rejection,
        )),
    }
}

fn bad(b: BadInput) -> PyErr {
    to_pyerr(Failure::BadInput(b))
}

/// JSON text from a `str` (its UTF-8, borrowed) or `bytes` (checked).
fn text<'a>(source: &str, obj: &'a Bound<'_, PyAny>) -> Result<&'a str, BadInput> {
    if let Ok(s) = obj.cast::<PyString>() {
        s.to_str().map_err(|_| {
            BadInput::new(
                source,
                "is not valid Unicode (it contains a lone surrogate)",
            )
        })
    } else if let Ok(b) = obj.cast::<PyBytes>() {
        utf8(source, b.as_bytes())
    } else {
        let kind = obj
            .get_type()
            .name()
            .map_or_else(|_| "?".to_string(), |n| n.to_string());
        Err(BadInput::new(
            source,
            format!("expected JSON text (str or bytes), got {kind}"),
        ))
    }
}

fn opt_text(source: &str, obj: Option<&Bound<'_, PyAny>>) -> Result<Option<String>, BadInput> {
    obj.filter(|o| !o.is_none())
        .map(|o| text(source, o).map(str::to_string))
        .transpose()
}

fn stamping(
    question: Option<&Bound<'_, PyAny>>,
    model: Option<&Bound<'_, PyAny>>,
    trace_id: Option<&Bound<'_, PyAny>>,
) -> Result<Stamping, BadInput> {
    Ok(Stamping {
        question: opt_text("question", question)?,
        model: opt_text("model", model)?,
        trace_id: opt_text("trace_id", trace_id)?,
    })
}

/// Verifies `answer` (JSON text of a GroundedAnswer) against `chunks` (JSON
/// text of an array of chunks); returns the contract as JSON text.
#[pyfunction]
#[pyo3(signature = (answer, chunks, *, question=None, model=None, trace_id=None, profile="default", claims="strict", dicts=false))]
#[allow(clippy::too_many_arguments)]
fn verify<'py>(
    py: Python<'py>,
    answer: &Bound<'_, PyAny>,
    chunks: &Bound<'_, PyAny>,
    question: Option<&Bound<'_, PyAny>>,
    model: Option<&Bound<'_, PyAny>>,
    trace_id: Option<&Bound<'_, PyAny>>,
    profile: &str,
    claims: &str,
    dicts: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let rules = Rules::parse(profile, claims).map_err(bad)?;
    let stamping = stamping(question, model, trace_id).map_err(bad)?;
    let answer = text("answer", answer).map_err(bad)?;
    let chunks = text("chunks", chunks).map_err(bad)?;
    let encoded = py
        .detach(|| api::verify(answer, chunks, rules, stamping).map(|c| encode(&c, dicts)))
        .map_err(bad)?;
    decoded(py, encoded)
}

/// Verifies batch requests (an iterable of JSON text of `{question?, chunks, answer,
/// trace_id?, model?}` each) on `jobs` threads with the GIL released.
/// Returns, in input order, the contract's JSON text or the `InputError`
/// (not raised) of each item.
/// With `dicts`, each contract comes back as a `dict` built here (the
/// `json.loads` of its JSON, without the text in between).
#[pyfunction]
#[pyo3(signature = (requests, *, model=None, jobs=None, profile="default", claims="strict", dicts=false))]
fn verify_many<'py>(
    py: Python<'py>,
    requests: &Bound<'py, PyAny>,
    model: Option<&Bound<'_, PyAny>>,
    jobs: Option<usize>,
    profile: &str,
    claims: &str,
    dicts: bool,
) -> PyResult<Bound<'py, PyList>> {
    let rules = Rules::parse(profile, claims).map_err(bad)?;
    let model = opt_text("model", model).map_err(bad)?;
    let options = api::batch_options(rules, model, jobs);
    // Borrow every item's text; the list holds the objects alive, and
    // Python strings and bytes are immutable, so the borrows stay valid
    // while the GIL is released.
    let items: Vec<Bound<'py, PyAny>> = requests.try_iter()?.collect::<PyResult<_>>()?;
    let docs: Vec<Result<&[u8], BadInput>> = items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            text("requests", item).map(str::as_bytes).map_err(|mut e| {
                e.line = Some(i + 1);
                e
            })
        })
        .collect();
    // Verified and encoded (JSON text, or a JSON value for `dicts`) on the
    // worker threads; only building Python objects needs the GIL.
    let results: Vec<Result<Encoded, BadInput>> = py.detach(|| {
        let threads = options.threads().min(docs.len().max(1));
        parallel_in_order(&docs, threads, |i, doc| {
            let contract = match doc {
                Ok(bytes) => api::verify_item(bytes, i + 1, &options)?,
                Err(e) => return Err(e.clone()),
            };
            Ok(encode(&contract, dicts))
        })
    });
    let out = PyList::empty(py);
    let mut keys = Keys::default();
    // Thousands of fresh lists and dicts would trigger the cyclic
    // collector over and over (a few percent of the call on the benchmark
    // workload); none of them can form a cycle here.
    let _paused = dicts.then(|| GcPause::new(py)).transpose()?;
    for r in results {
        match r {
            Ok(Encoded::Text(json)) => out.append(json)?,
            Ok(Encoded::Value(value)) => out.append(to_py(py, &value, &mut keys)?)?,
            Err(e) => out.append(bad(e).into_value(py))?,
        }
    }
    Ok(out)
}

/// The cyclic garbage collector switched off until drop, then back on if
/// it was on before (a caller that turned it off keeps it off). Holding the
/// GIL throughout and running no Python code, the loop it guards cannot let
/// anyone else see the pause.
struct GcPause<'py>(Option<Bound<'py, PyModule>>);

impl<'py> GcPause<'py> {
    fn new(py: Python<'py>) -> PyResult<Self> {
        let gc = py.import("gc")?;
        if !gc.call_method0("isenabled")?.is_truthy()? {
            return Ok(GcPause(None));
        }
        gc.call_method0("disable")?;
        Ok(GcPause(Some(gc)))
    }
}

impl Drop for GcPause<'_> {
    fn drop(&mut self) {
        if let Some(gc) = &self.0 {
            // `gc.enable()` cannot fail short of interpreter shutdown, when
            // there is nothing left to collect for.
            let _ = gc.call_method0("enable");
        }
    }
}

/// A contract encoded off the GIL.
enum Encoded {
    Text(String),
    Value(serde_json::Value),
}

/// The contract as JSON text, or (`dicts`) as a JSON value to build a
/// `dict` from.
fn encode(contract: &groundcite_core::Contract, dicts: bool) -> Encoded {
    if dicts {
        Encoded::Value(serde_json::to_value(contract).unwrap_or_else(
            |e| serde_json::json!({"error": {"code": "internal", "message": e.to_string()}}),
        ))
    } else {
        Encoded::Text(api::to_json(contract))
    }
}

/// The Python object of an encoded contract: `str` or `dict`.
fn decoded(py: Python<'_>, encoded: Encoded) -> PyResult<Bound<'_, PyAny>> {
    match encoded {
        Encoded::Text(json) => Ok(PyString::new(py, &json).into_any()),
        Encoded::Value(value) => to_py(py, &value, &mut Keys::default()),
    }
}

/// Interned dict keys: contracts repeat a few dozen keys thousands of times.
#[derive(Default)]
struct Keys(std::collections::HashMap<String, Py<PyString>>);

/// A JSON value as the Python object `json.loads` makes of it.
fn to_py<'py>(
    py: Python<'py>,
    value: &serde_json::Value,
    keys: &mut Keys,
) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value;
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for x in items {
                list.append(to_py(py, x, keys)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, x) in map {
                let key = match keys.0.get(k) {
                    Some(key) => key.bind(py).clone(),
                    None => {
                        let key = PyString::intern(py, k);
                        keys.0.insert(k.clone(), key.clone().unbind());
                        key
                    }
                };
                dict.set_item(key, to_py(py, x, keys)?)?;
            }
            dict.into_any()
        }
    })
}

/// `items` mapped through `f(index, item)` on `threads` scoped threads
/// (contiguous slices, so no locking); results in input order.
fn parallel_in_order<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(usize, &T) -> R + Sync,
) -> Vec<R> {
    if threads <= 1 || items.len() < 2 {
        return items.iter().enumerate().map(|(i, x)| f(i, x)).collect();
    }
    // Interleaved assignment (item i to thread i % threads) balances
    // uneven items better than contiguous halves.
    let f = &f;
    let mut parts: Vec<Vec<(usize, R)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    items
                        .iter()
                        .enumerate()
                        .skip(t)
                        .step_by(threads)
                        .map(|(i, x)| (i, f(i, x)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    let mut slots: Vec<Option<R>> = std::iter::repeat_with(|| None).take(items.len()).collect();
    for part in &mut parts {
        for (i, r) in part.drain(..) {
            slots[i] = Some(r);
        }
    }
    // Every index was assigned to exactly one thread.
    slots.into_iter().flatten().collect()
}

/// Verifies a free-form answer with citation markers; raises
/// `CitationFormatError` when no citation can be extracted.
#[pyfunction]
#[pyo3(signature = (text, chunks, *, question=None, model=None, trace_id=None, profile="default", claims="strict", dicts=false))]
#[allow(clippy::too_many_arguments)]
fn parse<'py>(
    py: Python<'py>,
    text: &Bound<'_, PyAny>,
    chunks: &Bound<'_, PyAny>,
    question: Option<&Bound<'_, PyAny>>,
    model: Option<&Bound<'_, PyAny>>,
    trace_id: Option<&Bound<'_, PyAny>>,
    profile: &str,
    claims: &str,
    dicts: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let rules = Rules::parse(profile, claims).map_err(bad)?;
    let stamping = stamping(question, model, trace_id).map_err(bad)?;
    let answer = self::text("text", text).map_err(bad)?;
    let chunks = self::text("chunks", chunks).map_err(bad)?;
    let encoded = py
        .detach(|| api::parse(answer, chunks, rules, stamping).map(|c| encode(&c, dicts)))
        .map_err(to_pyerr)?;
    decoded(py, encoded)
}

/// Converts and verifies a provider-native response.
#[pyfunction]
#[pyo3(signature = (provider, response, chunks, *, request=None, question=None, model=None, trace_id=None, profile="default", claims="strict", dicts=false))]
#[allow(clippy::too_many_arguments)]
fn convert<'py>(
    py: Python<'py>,
    provider: &str,
    response: &Bound<'_, PyAny>,
    chunks: &Bound<'_, PyAny>,
    request: Option<&Bound<'_, PyAny>>,
    question: Option<&Bound<'_, PyAny>>,
    model: Option<&Bound<'_, PyAny>>,
    trace_id: Option<&Bound<'_, PyAny>>,
    profile: &str,
    claims: &str,
    dicts: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let rules = Rules::parse(profile, claims).map_err(bad)?;
    let stamping = stamping(question, model, trace_id).map_err(bad)?;
    let response = text("response", response).map_err(bad)?;
    let chunks = text("chunks", chunks).map_err(bad)?;
    let request = request
        .filter(|r| !r.is_none())
        .map(|r| text("request", r))
        .transpose()
        .map_err(bad)?;
    let encoded = py
        .detach(|| {
            api::convert(provider, response, chunks, request, rules, stamping)
                .map(|c| encode(&c, dicts))
        })
        .map_err(bad)?;
    decoded(py, encoded)
}

/// The strict structured-output request fragment for `target` as JSON
/// text, and its notes; `chunk_id` becomes an enum of the IDs of `chunks`
/// (JSON text of an array of chunks, validated as `verify` does) or of
/// `chunk_ids`.
#[pyfunction]
#[pyo3(signature = (target, chunks=None, chunk_ids=None))]
fn schema(
    target: &str,
    chunks: Option<&Bound<'_, PyAny>>,
    chunk_ids: Option<Vec<String>>,
) -> PyResult<(String, Vec<String>)> {
    let ids = match chunks.filter(|c| !c.is_none()) {
        Some(c) => {
            let set = crate::input::parse_chunks("chunks", text("chunks", c).map_err(bad)?)
                .map_err(bad)?;
            Some(set.chunks().iter().map(|c| c.chunk_id.clone()).collect())
        }
        None => chunk_ids,
    };
    let fragment = api::schema(target, ids.as_deref()).map_err(bad)?;
    Ok((fragment.value.to_string(), fragment.notes))
}

/// The violations of `target`'s strict subset in `schema` (JSON text), as
/// JSON text of `[{pointer, rule, message, provider_error}]`.
#[pyfunction]
fn lint(schema: &Bound<'_, PyAny>, target: &str) -> PyResult<String> {
    let document = text("schema", schema).map_err(bad)?;
    let violations = api::lint(document, target).map_err(bad)?;
    serde_json::to_string(&violations).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// For the benchmark: seconds per call of the Rust verifier on JSON text
/// (parse, verify, serialize: what `verify` does), `n` calls in a loop in
/// this process, without crossing into Python.
#[pyfunction]
fn _time_verify(
    py: Python<'_>,
    answer: &Bound<'_, PyAny>,
    chunks: &Bound<'_, PyAny>,
    n: usize,
) -> PyResult<f64> {
    let answer = text("answer", answer).map_err(bad)?;
    let chunks = text("chunks", chunks).map_err(bad)?;
    let rules = Rules::parse("default", "strict").map_err(bad)?;
    py.detach(|| {
        let start = Instant::now();
        for _ in 0..n.max(1) {
            let c = api::verify(answer, chunks, rules, Stamping::default())?;
            std::hint::black_box(api::to_json(&c));
        }
        Ok(start.elapsed().as_secs_f64() / n.max(1) as f64)
    })
    .map_err(bad)
}

/// The extension module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("PROVIDERS", api::PROVIDERS)?;
    m.add_function(wrap_pyfunction!(verify, m)?)?;
    m.add_function(wrap_pyfunction!(verify_many, m)?)?;
    m.add_function(wrap_pyfunction!(parse, m)?)?;
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(lint, m)?)?;
    m.add_function(wrap_pyfunction!(_time_verify, m)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parallel_in_order;

    #[test]
    fn parallel_map_keeps_input_order() {
        for threads in [1, 2, 3, 8] {
            let items: Vec<u32> = (0..101).collect();
            let out = parallel_in_order(&items, threads, |i, x| (i, x * 3));
            assert_eq!(out.len(), 101);
            for (k, (i, x)) in out.into_iter().enumerate() {
                assert_eq!((i, x), (k, 3 * k as u32), "threads {threads}");
            }
        }
    }
}

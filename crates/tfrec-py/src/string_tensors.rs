//! String tensors out to Python in the form a parse call's `strings=` asks for: NumPy object
//! arrays of `bytes` (the default, as TensorFlow's `.numpy()` gives), NumPy `StringDType`
//! arrays (`"numpy"`), or pyarrow `binary` arrays (`"arrow"`). The last two make no Python
//! object per value: a `StringDType` array is filled through NumPy's C API (`NpyString_pack`
//! into the array's own arena), an Arrow array takes the parser's bytes as its value buffer.

use std::ffi::{c_char, c_int, c_void, CString};

use numpy::npyffi::PyArrayObject;
use numpy::{PyArrayDescrMethods, PyArrayDyn, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyImportError, PyMemoryError, PyUnicodeDecodeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyCapsule, PyTuple};
use tfrec::columnar::dense_tensor_array;
use tfrec::parse::{BytesArray, DenseTensor, Values};

use crate::arrow::ArrowArray;
use crate::errors::PyTfrecError;

/// How string tensors cross to Python: the `strings=` argument of every parse call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StringForm {
    /// NumPy object arrays of `bytes` (TensorFlow's `.numpy()`).
    #[default]
    Object,
    /// NumPy `StringDType` arrays of text (NumPy 2 or later); a value that is not UTF-8 is a
    /// `UnicodeDecodeError` naming the feature.
    Numpy,
    /// pyarrow `binary` arrays (bytes, as TensorFlow holds them).
    Arrow,
}

impl StringForm {
    /// The form `strings=` names; anything else is a `ValueError` listing the choices.
    pub fn from_name(name: &str) -> PyResult<StringForm> {
        match name {
            "object" => Ok(StringForm::Object),
            "numpy" => Ok(StringForm::Numpy),
            "arrow" => Ok(StringForm::Arrow),
            other => Err(PyValueError::new_err(format!(
                "strings must be 'object', 'numpy' or 'arrow', not {other:?}"
            ))),
        }
    }

    /// Checks now that the form can be made (NumPy 2 for `"numpy"`, pyarrow for `"arrow"`), so
    /// a pipeline fails when it is built rather than at its first batch.
    pub fn check_available(self, py: Python<'_>) -> PyResult<()> {
        match self {
            StringForm::Object => Ok(()),
            StringForm::Numpy => numpy_strings(py).map(|_| ()),
            StringForm::Arrow => pyarrow_array(py).map(|_| ()),
        }
    }
}

/// `NpyString_acquire_allocator(const PyArray_StringDTypeObject *descr)`.
type AcquireAllocator = unsafe extern "C" fn(*const c_void) -> *mut c_void;
/// `NpyString_pack(npy_string_allocator *, npy_packed_static_string *, const char *buf, size_t)`.
type PackString = unsafe extern "C" fn(*mut c_void, *mut c_void, *const c_char, usize) -> c_int;
/// `NpyString_release_allocator(npy_string_allocator *)`.
type ReleaseAllocator = unsafe extern "C" fn(*mut c_void);

/// NumPy's `StringDType` and the three functions of its C API that fill an array of it.
struct NumpyStrings {
    /// `numpy.dtypes.StringDType`.
    dtype: Py<PyAny>,
    /// `numpy.empty`.
    empty: Py<PyAny>,
    acquire: AcquireAllocator,
    pack: PackString,
    release: ReleaseAllocator,
    /// Whether this NumPy stores a short string as `short_string_element` says; checked once
    /// against `pack` itself (`packs_like_numpy`), so that short values are written directly.
    short_strings_inline: bool,
}

/// The longest string NumPy's `StringDType` keeps inside its 16-byte array element.
const SHORT_STRING_MAX: usize = 15;
/// The size of a `StringDType` array element on a 64-bit machine.
const ELEMENT_SIZE: usize = SHORT_STRING_MAX + 1;
/// The flags of a short string in the last byte of its element: initialised, outside the arena.
const SHORT_STRING_FLAGS: u8 = 0x60;

/// The element `NpyString_pack` leaves in a zeroed `StringDType` element for a `value` of 1 to
/// `SHORT_STRING_MAX` bytes on a 64-bit little-endian machine (NEP 55's small-string form, in
/// NumPy's `static_string.c`): the bytes, zero padding, and a last byte of flags and length.
/// NumPy does not promise this layout, so it is used only where `packs_like_numpy` has seen
/// `NpyString_pack` write these very bytes.
fn short_string_element(value: &[u8]) -> [u8; ELEMENT_SIZE] {
    let mut element = [0u8; ELEMENT_SIZE];
    element[..value.len()].copy_from_slice(value);
    // A length of at most 15 fits the low four bits, below the flags.
    element[SHORT_STRING_MAX] = SHORT_STRING_FLAGS | value.len() as u8;
    element
}

/// `short_string_element` of the first `len` bytes of `window` (`ELEMENT_SIZE` bytes, `len`
/// from 1 to `SHORT_STRING_MAX`), made from one load and a mask instead of a copy of `len` bytes:
/// most values have that many bytes of the buffer after them.
fn short_string_element_of_window(window: &[u8], len: usize) -> [u8; ELEMENT_SIZE] {
    let mut word = [0u8; ELEMENT_SIZE];
    word.copy_from_slice(window);
    let kept = u128::from_le_bytes(word) & ((1u128 << (8 * len)) - 1);
    let flags = u128::from(SHORT_STRING_FLAGS | len as u8) << (8 * SHORT_STRING_MAX);
    (kept | flags).to_le_bytes()
}

/// Whether `NpyString_pack` writes `short_string_element`'s bytes for strings of every short
/// length, packed into a fresh array as `numpy_string_array` packs. `false` (a NumPy whose
/// layout differs, a big-endian or 32-bit machine) keeps every value on `NpyString_pack`.
fn packs_like_numpy(py: Python<'_>, api: &NumpyStrings) -> PyResult<bool> {
    const PROBE: &[u8; SHORT_STRING_MAX] = b"tfrec:probe/015";
    let array = api
        .empty
        .bind(py)
        .call1((SHORT_STRING_MAX, api.dtype.bind(py).call0()?))?;
    let untyped = array.cast::<PyUntypedArray>()?;
    if untyped.dtype().itemsize() != ELEMENT_SIZE || untyped.len() != SHORT_STRING_MAX || !untyped.is_c_contiguous() {
        return Ok(false);
    }
    let raw: *mut PyArrayObject = untyped.as_array_ptr();
    let mut packed = [[0u8; ELEMENT_SIZE]; SHORT_STRING_MAX];
    // SAFETY: `raw` is a live, C-contiguous array of `SHORT_STRING_MAX` elements of
    // `ELEMENT_SIZE` bytes (checked above), just made and not shared, so element `i` lies at
    // `data + i * ELEMENT_SIZE`, and reading it back as bytes is reading inside the array. Its
    // descriptor is a `StringDType` instance, what `NpyString_acquire_allocator` takes; the
    // allocator is released after the last pack, and the GIL is held throughout.
    let all_packed = unsafe {
        let data = (*raw).data as *mut u8;
        let allocator = (api.acquire)((*raw).descr as *const c_void);
        let mut all_packed = true;
        for (i, element) in packed.iter_mut().enumerate() {
            let at = data.add(i * ELEMENT_SIZE);
            all_packed &= (api.pack)(allocator, at.cast(), PROBE.as_ptr().cast(), i + 1) == 0;
            std::ptr::copy_nonoverlapping(at, element.as_mut_ptr(), ELEMENT_SIZE);
        }
        (api.release)(allocator);
        all_packed
    };
    Ok(all_packed
        && packed
            .iter()
            .enumerate()
            .all(|(i, element)| *element == short_string_element(&PROBE[..=i])))
}

// Slots of NumPy's C API table (`numpy/_core/code_generators/numpy_api.py`, "NEP 55"), fixed
// by NumPy's ABI since 2.0. The `numpy` crate declares `NpyString_pack` without its arguments,
// so the table is read here.
const ACQUIRE_ALLOCATOR_SLOT: usize = 316;
const PACK_SLOT: usize = 314;
const RELEASE_ALLOCATOR_SLOT: usize = 318;

fn numpy_strings(py: Python<'_>) -> PyResult<&NumpyStrings> {
    static API: PyOnceLock<NumpyStrings> = PyOnceLock::new();
    API.get_or_try_init(py, || {
        let numpy = py.import("numpy")?;
        let dtype = match py.import("numpy.dtypes").and_then(|m| m.getattr("StringDType")) {
            Ok(dtype) => dtype,
            Err(_) => {
                let version = numpy.getattr("__version__")?;
                return Err(PyImportError::new_err(format!(
                    "strings='numpy' needs NumPy 2.0 or later (its StringDType); NumPy {version} is \
                     installed: upgrade it, or use strings='object' or 'arrow'"
                )));
            }
        };
        let table = py.import("numpy._core.multiarray")?.getattr("_ARRAY_API")?;
        let table = table.cast::<PyCapsule>()?.pointer_checked(None)?;
        let table = table.as_ptr() as *const *const c_void;
        // SAFETY: `_ARRAY_API` is NumPy's C API table, an array of function pointers that lives
        // as long as the process; `StringDType` exists only from NumPy 2.0, whose table has
        // these slots, each holding the function whose C signature the type above copies.
        let (acquire, pack, release) = unsafe {
            (
                std::mem::transmute::<*const c_void, AcquireAllocator>(*table.add(ACQUIRE_ALLOCATOR_SLOT)),
                std::mem::transmute::<*const c_void, PackString>(*table.add(PACK_SLOT)),
                std::mem::transmute::<*const c_void, ReleaseAllocator>(*table.add(RELEASE_ALLOCATOR_SLOT)),
            )
        };
        let mut api = NumpyStrings {
            dtype: dtype.unbind(),
            empty: numpy.getattr("empty")?.unbind(),
            acquire,
            pack,
            release,
            short_strings_inline: false,
        };
        api.short_strings_inline = packs_like_numpy(py, &api)?;
        Ok(api)
    })
}

fn pyarrow_array(py: Python<'_>) -> PyResult<&Py<PyAny>> {
    static ARRAY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    ARRAY.get_or_try_init(py, || {
        let pyarrow = py.import("pyarrow").map_err(|e| {
            PyImportError::new_err(format!(
                "strings='arrow' needs pyarrow ({e}): install it, or use strings='object' or 'numpy'"
            ))
        })?;
        Ok(pyarrow.getattr("array")?.unbind())
    })
}

/// The index of the first value that is not UTF-8, if any. The whole buffer is checked at
/// once: when it is UTF-8 and every value starts on a character boundary, every value is (and
/// in ASCII every byte is a boundary, so the values' starts need no look then).
fn first_not_utf8(values: &BytesArray) -> Option<usize> {
    let data = values.data();
    let end = values.offsets().last().copied().unwrap_or(0);
    let all_text = data.get(..end).is_some_and(|text| {
        text.is_ascii()
            || std::str::from_utf8(text).is_ok()
                && values
                    .offsets()
                    .iter()
                    .all(|&o| text.get(o).is_none_or(|&b| !(0x80..0xC0).contains(&b)))
    });
    if all_text {
        return None;
    }
    values.iter().position(|v| std::str::from_utf8(v).is_err())
}

/// `UnicodeDecodeError` for value `index` of `feature`, which is not UTF-8.
fn not_utf8(py: Python<'_>, feature: &str, index: usize, value: &[u8]) -> PyErr {
    let (start, end) = match std::str::from_utf8(value) {
        Err(e) => (
            e.valid_up_to(),
            e.valid_up_to() + e.error_len().unwrap_or(value.len() - e.valid_up_to()),
        ),
        Ok(_) => (0, value.len()),
    };
    let reason = format!(
        "invalid UTF-8 in value {index} of feature '{feature}': strings='numpy' holds text; \
         strings='object' or 'arrow' give bytes"
    );
    let reason = CString::new(reason.replace('\0', "\\0")).unwrap_or_default();
    match PyUnicodeDecodeError::new(py, c"utf-8", value, start..end, &reason) {
        Ok(error) => PyErr::from_value(error.into_any()),
        Err(error) => error,
    }
}

/// `values` of `shape` as a NumPy `StringDType` array.
fn numpy_string_array<'py>(
    py: Python<'py>,
    shape: &[usize],
    values: &BytesArray,
    feature: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let api = numpy_strings(py)?;
    if let Some(i) = first_not_utf8(values) {
        return Err(not_utf8(py, feature, i, values.value(i)));
    }
    let array = api
        .empty
        .bind(py)
        .call1((PyTuple::new(py, shape)?, api.dtype.bind(py).call0()?))?;
    let untyped = array.cast::<PyUntypedArray>()?;
    let item_size = untyped.dtype().itemsize();
    if untyped.len() != values.len() || !untyped.is_c_contiguous() {
        // Unreachable: `numpy.empty` makes a C-contiguous array of the tensor's shape.
        return Err(PyValueError::new_err(format!(
            "feature '{feature}': numpy.empty gave an array that does not fit its values"
        )));
    }
    let raw: *mut PyArrayObject = untyped.as_array_ptr();
    let mut failed = None;
    // SAFETY: `raw` is a live, C-contiguous array of `values.len()` elements of `item_size`
    // bytes (checked above), just made and not shared, so element `i` lies at `data + i *
    // item_size`; its descriptor is a `StringDType` instance, what `NpyString_acquire_allocator`
    // takes. The allocator is released on every path, after the last pack, and the GIL is held
    // throughout. `NpyString_pack` copies `value`, which outlives the call. A short value is
    // written as the `ELEMENT_SIZE` bytes (the item size, where `short_strings_inline`) that
    // `NpyString_pack` was seen to write into a zeroed element for it, which is what element
    // `i` still is: short strings live in their element alone, with no allocator state, so the
    // array ends as packing would have left it.
    let inline = api.short_strings_inline && item_size == ELEMENT_SIZE;
    unsafe {
        let data = (*raw).data as *mut u8;
        let allocator = (api.acquire)((*raw).descr as *const c_void);
        let buffer = values.data();
        for (i, (value, &start)) in values.iter().zip(values.offsets()).enumerate() {
            // `numpy.empty` zero-fills a `StringDType` array, and a zeroed element is the empty
            // string (NEP 55), so empty values (the padding of a feature list, most often) are
            // left as they are, a pack call saved each.
            if value.is_empty() {
                continue;
            }
            let element = data.add(i * item_size);
            if inline && value.len() <= SHORT_STRING_MAX {
                let bytes = match buffer.get(start..start + ELEMENT_SIZE) {
                    Some(window) => short_string_element_of_window(window, value.len()),
                    None => short_string_element(value),
                };
                element.cast::<[u8; ELEMENT_SIZE]>().write_unaligned(bytes);
                continue;
            }
            if (api.pack)(allocator, element.cast(), value.as_ptr().cast(), value.len()) < 0 {
                failed = Some(i);
                break;
            }
        }
        (api.release)(allocator);
    }
    match failed {
        Some(i) => Err(PyMemoryError::new_err(format!(
            "feature '{feature}': NumPy could not store string value {i}"
        ))),
        None => Ok(array),
    }
}

/// A string tensor as a pyarrow array (`binary`; nested `FixedSizeList`s for its trailing
/// dimensions), or a pyarrow scalar for a tensor of shape `[]`.
fn arrow_string_array<'py>(py: Python<'py>, tensor: DenseTensor, feature: &str) -> PyResult<Bound<'py, PyAny>> {
    let array_of = pyarrow_array(py)?;
    let scalar = tensor.shape().is_empty();
    let array = dense_tensor_array(tensor, feature).map_err(PyTfrecError::from)?;
    let array = array_of.bind(py).call1((ArrowArray::new(array),))?;
    if scalar {
        array.get_item(0)
    } else {
        Ok(array)
    }
}

/// `values` of `shape` as a NumPy object array of `bytes`.
fn object_array<'py>(py: Python<'py>, shape: &[usize], values: &BytesArray) -> PyResult<Bound<'py, PyAny>> {
    let objects: Vec<Py<PyBytes>> = values.iter().map(|b| PyBytes::new(py, b).unbind()).collect();
    let objects = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(shape), objects)
        // Unreachable: a tensor's shape holds its values.
        .map_err(|e| PyValueError::new_err(format!("a string tensor's shape does not fit its values: {e}")))?;
    Ok(PyArrayDyn::from_owned_object_array(py, objects).into_any())
}

/// A string tensor (`feature`, or the values of a sparse or ragged one) in the form `form`.
pub fn string_tensor<'py>(
    py: Python<'py>,
    tensor: DenseTensor,
    form: StringForm,
    feature: &str,
) -> PyResult<Bound<'py, PyAny>> {
    if form == StringForm::Arrow {
        return arrow_string_array(py, tensor, feature);
    }
    let Values::String(values) = tensor.values() else {
        return Err(PyValueError::new_err(format!(
            "feature '{feature}' is not a string tensor"
        )));
    };
    match form {
        StringForm::Numpy => numpy_string_array(py, tensor.shape(), values, feature),
        _ => object_array(py, tensor.shape(), values),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(values: &[&[u8]]) -> BytesArray {
        let mut out = BytesArray::new();
        for v in values {
            out.push(v);
        }
        out
    }

    #[test]
    fn an_element_of_a_window_is_the_element_of_its_value() {
        let buffer: Vec<u8> = (1..=2 * ELEMENT_SIZE as u8).collect();
        for start in 0..ELEMENT_SIZE {
            for len in 1..=SHORT_STRING_MAX {
                let window = &buffer[start..start + ELEMENT_SIZE];
                assert_eq!(
                    short_string_element_of_window(window, len),
                    short_string_element(&window[..len]),
                    "start {start}, length {len}"
                );
            }
        }
        let mut want = [0u8; ELEMENT_SIZE];
        want[..3].copy_from_slice(b"abc");
        want[SHORT_STRING_MAX] = 0x63;
        assert_eq!(short_string_element(b"abc"), want);
    }

    #[test]
    fn text_is_found_text() {
        assert_eq!(first_not_utf8(&bytes(&[b"", "é".as_bytes(), b"abc", b""])), None);
        assert_eq!(first_not_utf8(&bytes(&[])), None);
    }

    #[test]
    fn a_bad_byte_is_found_in_its_value() {
        assert_eq!(first_not_utf8(&bytes(&[b"ok", b"\xff", b"x"])), Some(1));
    }

    #[test]
    fn a_character_split_between_values_is_not_text() {
        // "é" is C3 A9: the buffer is UTF-8, but neither half is.
        assert_eq!(first_not_utf8(&bytes(&[b"a\xC3", b"\xA9b"])), Some(0));
    }
}

/* Strata's C API: load a compiled module (.smod), open a device, call the
 * module's functions on tensors.
 *
 *   strata_instance* instance;  strata_device* device;  strata_module* module;
 *   strata_function* predict;   strata_tensor *input, *output;
 *   strata_status* s = strata_instance_create(&instance);
 *   if (!s) s = strata_device_open(instance, "cpu-task", "threads=2", &device);
 *   if (!s) s = strata_module_load_file(device, "mlp.smod", &module);
 *   if (!s) s = strata_module_lookup_function(module, "predict", &predict);
 *   int64_t shape[2] = {1, 784};
 *   if (!s) s = strata_tensor_create(device, STRATA_ELEMENT_TYPE_F32, shape, 2,
 *                                    pixels, sizeof(pixels), &input);
 *   if (!s) s = strata_function_call(predict, &input, 1, &output, 1);
 *   const float* scores;
 *   if (!s) s = strata_tensor_data(output, (const void**)&scores);
 *   if (s) { fprintf(stderr, "%s\n", strata_status_message(s)); strata_status_free(s); }
 *   ... then strata_tensor_release(output), strata_tensor_release(input),
 *   strata_module_release(module), strata_device_release(device),
 *   strata_instance_release(instance) (any order: objects keep alive what
 *   they need).
 *
 * Objects. An instance lists the drivers of the library and opens devices. A
 * device (one instance of a driver: "cpu-sync", "cpu-task") owns memory and
 * runs work. A module is a .smod file loaded onto one device, ready to call;
 * its functions are looked up by name and describe their inputs and outputs.
 * Tensors are dense, row-major arrays with a shape and an element type that
 * live in a device's memory; functions take and return them. A scalar input
 * or output of a function (an i32, i64, f32 or f64 in the module's
 * signature) travels as a 0-d tensor (rank 0) of that element type.
 *
 * Ownership. Functions that create an object (`_create`, `_open`, `_load_*`,
 * and the outputs of strata_function_call) hand the caller one reference;
 * `_retain` adds one and `_release` drops one, destroying the object with the
 * last. Every object keeps alive what it was made from (a module its device,
 * a tensor its memory), so references may be released in any order.
 * Pointers returned by accessors (names, shapes, types, a tensor's data) are
 * borrowed: valid for as long as the object they came from lives. Releasing
 * NULL does nothing; an accessor given NULL returns 0, NULL or "".
 *
 * Errors. Every fallible function returns a strata_status*: NULL on success,
 * otherwise a status the caller owns and frees with strata_status_free. Its
 * message names the argument and the expected and actual values ("predict:
 * input 0: expected tensor<1x784xf32>, got tensor<2x784xf32>"); a failure
 * inside a module's program adds the program's backtrace. On failure, out_
 * parameters are left untouched. Bad input (a null pointer where an object is
 * required, a wrong shape, a corrupt module file) is an error, never a crash;
 * a pointer to something that is not a live object of the named type is
 * undefined behaviour, as in every C API.
 *
 * Thread safety. Every function may be called from any thread. Instances,
 * devices, modules and functions may be shared by any number of threads:
 * strata_function_call may run concurrently on one module from many threads
 * (each call runs in a VM context of its own, taken from a pool the module
 * keeps, so no call waits for another to finish). Tensors are immutable
 * once created, so one input tensor may be passed to concurrent calls; the
 * memory of a wrapped tensor must not be written by the caller while a call
 * reads it.
 * Reference counts are atomic. A status is owned by whoever received it: it
 * may move between threads, but only one uses it at a time.
 */
#ifndef STRATA_STRATA_H_
#define STRATA_STRATA_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define STRATA_API __attribute__((visibility("default")))
#else
#define STRATA_API
#endif

/* ------------------------------------------------------------------------ */
/* Version                                                                  */
/* ------------------------------------------------------------------------ */

/* The version of this header. A library with the same major version runs
 * programs written against it; a minor version adds functions only. */
#define STRATA_VERSION_MAJOR 0
#define STRATA_VERSION_MINOR 1
#define STRATA_VERSION_PATCH 0
#define STRATA_VERSION_STRING "0.1.0"

/* The version of the library linked at run time, "0.1.0"; compare it with
 * STRATA_VERSION_STRING to detect a header/library mismatch. Static string. */
STRATA_API const char* strata_version(void);

/* ------------------------------------------------------------------------ */
/* Status                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct strata_status strata_status;

/* What kind of failure a status reports. */
typedef enum strata_code {
  STRATA_OK = 0,
  STRATA_INVALID_ARGUMENT = 1,     /* wrong type, shape, count; malformed data */
  STRATA_NOT_FOUND = 2,            /* missing file, function, driver */
  STRATA_OUT_OF_RANGE = 3,         /* index or byte range past the end */
  STRATA_FAILED_PRECONDITION = 4,  /* object in the wrong state (read-only memory) */
  STRATA_RESOURCE_EXHAUSTED = 5,   /* out of memory, VM stack depth */
  STRATA_DEADLINE_EXCEEDED = 6,    /* a deadline or timeout passed */
  STRATA_ABORTED = 7,              /* the program asked to fail */
  STRATA_UNIMPLEMENTED = 8,        /* a valid feature this build does not have */
  STRATA_UNAVAILABLE = 9,          /* a driver built in but unusable on this machine */
  STRATA_INCOMPATIBLE = 10,        /* a module newer than, or built for other than, this runtime */
  STRATA_DATA_LOSS = 11,           /* truncated or corrupt file */
  STRATA_INTERNAL = 12,            /* a bug in Strata */
  STRATA_PERMISSION_DENIED = 13,   /* a module not signed by the trusted key */
  STRATA_CODE_MAX_ENUM = 0x7FFFFFFF /* not a code: keeps the enum 32 bits wide */
} strata_code;

/* The status's code; STRATA_OK for NULL. */
STRATA_API strata_code strata_status_code(const strata_status* status);

/* The status's message, followed by one "\n  at module.function@pc (file:line:col)"
 * line per frame when the failure happened inside a module's program; ""
 * for NULL. Borrowed: valid until the status is freed. */
STRATA_API const char* strata_status_message(const strata_status* status);

/* "INVALID_ARGUMENT", ...; a static string ("UNKNOWN" for a value outside
 * the enum). */
STRATA_API const char* strata_code_name(strata_code code);

/* Frees a status; NULL does nothing. */
STRATA_API void strata_status_free(strata_status* status);

/* ------------------------------------------------------------------------ */
/* Instance and devices                                                     */
/* ------------------------------------------------------------------------ */

typedef struct strata_instance strata_instance;
typedef struct strata_device strata_device;

/* Creates an instance: the drivers compiled into this library. Cheap; an
 * application normally creates one. */
STRATA_API strata_status* strata_instance_create(strata_instance** out_instance);
STRATA_API void strata_instance_retain(strata_instance* instance);
STRATA_API void strata_instance_release(strata_instance* instance);

/* The drivers of this library, in registration order ("cpu-sync",
 * "cpu-task" where built). A driver listed here may still be unavailable on
 * this machine (a GPU driver without its GPU): strata_device_open says why.
 * Names and descriptions are borrowed from the instance; an index out of
 * range gives NULL. */
STRATA_API size_t strata_instance_driver_count(const strata_instance* instance);
STRATA_API const char* strata_instance_driver_name(const strata_instance* instance, size_t index);
STRATA_API const char* strata_instance_driver_description(const strata_instance* instance, size_t index);

/* Opens a device of driver `driver` ("cpu-sync", "cpu-task"). `options` (NULL
 * or "" for none) is a list of key=value pairs joined by '&', each known to
 * the driver: "threads=N" for cpu-task (worker threads; the default is one
 * per core). With `options` NULL, `driver` may carry them itself, as
 * "cpu-task?threads=2". An unknown driver fails with NOT_FOUND listing the
 * drivers; an unknown option with INVALID_ARGUMENT naming the driver's
 * options; a driver that cannot run here with UNAVAILABLE saying what is
 * missing. */
STRATA_API strata_status* strata_device_open(strata_instance* instance, const char* driver, const char* options,
                                             strata_device** out_device);
STRATA_API void strata_device_retain(strata_device* device);
STRATA_API void strata_device_release(strata_device* device);

/* "cpu-task?threads=2": the driver and options the device was opened with.
 * Borrowed from the device. */
STRATA_API const char* strata_device_name(const strata_device* device);
/* One line for humans: "CPU, 2 worker threads (oneTBB)". Borrowed. */
STRATA_API const char* strata_device_description(const strata_device* device);

/* ------------------------------------------------------------------------ */
/* Modules and functions                                                    */
/* ------------------------------------------------------------------------ */

typedef struct strata_module strata_module;
typedef struct strata_function strata_function;

/* Loads the module file at `path` onto `device`: maps the file read-only
 * (nothing is copied: weights and executables are used in place from the
 * mapping, which lives as long as the module), verifies it (a corrupt or
 * truncated file fails with DATA_LOSS or INVALID_ARGUMENT, a file for a newer
 * runtime with INCOMPATIBLE) and links it with the device (a module that
 * imports what this runtime lacks fails here, naming the import). Its
 * executables are prepared for the device by the first call that needs them
 * and then shared by every call. The module keeps the device alive. To run
 * one file on two devices, load it once per device; the operating system
 * shares the mapped pages. */
STRATA_API strata_status* strata_module_load_file(strata_device* device, const char* path,
                                                  strata_module** out_module);

/* As strata_module_load_file, from `byte_length` bytes at `data` that the
 * caller owns: zero-copy, the module reads them in place for its whole life.
 * The caller keeps them alive and unchanged until they are no longer used;
 * pass `release` (may be NULL) to be told when: it is called once, with
 * `user_data`, after the last reference to the module is gone and no output
 * tensor views the module's constants any more (or before this function
 * returns an error). `data` must be 64-byte aligned (as
 * weights and executables sit at 64-byte boundaries in the file) -- memory
 * from malloc may not be; aligned_alloc(64, ...) or mmap is. */
STRATA_API strata_status* strata_module_load_memory(strata_device* device, const void* data, size_t byte_length,
                                                    void (*release)(void* user_data), void* user_data,
                                                    strata_module** out_module);
/* Limits on one call of a module's function; 0 means none. `max_steps`
 * counts the branches and calls of the module's program (straight-line code
 * between them is bounded by the program's size), beyond which the call
 * fails with RESOURCE_EXHAUSTED; `timeout_us` is wall time from the start of
 * the call, after which it fails with DEADLINE_EXCEEDED (checked every 65536
 * steps of the program; a kernel already running on the device finishes
 * first). A call stopped this way leaves the module usable. */
typedef struct strata_call_limits {
  uint64_t max_steps;
  uint64_t timeout_us;
} strata_call_limits;

/* How a module is loaded; a zeroed struct (or NULL options) gives the
 * defaults of strata_module_load_file. */
typedef struct strata_module_options {
  /* NULL, or the 32 bytes of an Ed25519 public key (compile-module
   * --generate-sign-key writes it, as hex, to NAME.pub): the module must then
   * be signed with its secret key (compile-module --sign-key), or loading
   * fails with PERMISSION_DENIED. Checking a signature opens libsodium
   * (libsodium.so.23) at run time; UNAVAILABLE when it is missing. */
  const uint8_t* trusted_public_key;
  /* The limits of every call of the module's functions, unless a call gives
   * its own (strata_function_call_with_limits). */
  strata_call_limits call_limits;
} strata_module_options;

/* strata_module_load_file and strata_module_load_memory with options. Every
 * module file ends in an integrity record (digests of its parts, written by
 * compile-module) that loading checks before it reads anything: a changed
 * byte fails with DATA_LOSS naming the part (an executable, a weight
 * segment, the description), a file without the record likewise. */
STRATA_API strata_status* strata_module_load_file_with_options(strata_device* device, const char* path,
                                                               const strata_module_options* options,
                                                               strata_module** out_module);
STRATA_API strata_status* strata_module_load_memory_with_options(strata_device* device, const void* data,
                                                                 size_t byte_length, void (*release)(void* user_data),
                                                                 void* user_data, const strata_module_options* options,
                                                                 strata_module** out_module);
STRATA_API void strata_module_retain(strata_module* module);
STRATA_API void strata_module_release(strata_module* module);

/* The module's name as compiled ("module"). Borrowed. */
STRATA_API const char* strata_module_name(const strata_module* module);

/* The functions the module exports, by index; an index out of range gives
 * NULL. Functions are borrowed from the module: valid while it lives, with no
 * retain or release of their own. */
STRATA_API size_t strata_module_function_count(const strata_module* module);
STRATA_API strata_function* strata_module_function(const strata_module* module, size_t index);

/* Finds an exported function by name; NOT_FOUND lists the functions that
 * exist. The function is borrowed from the module. */
STRATA_API strata_status* strata_module_lookup_function(const strata_module* module, const char* name,
                                                        strata_function** out_function);

/* "predict". Borrowed from the module. */
STRATA_API const char* strata_function_name(const strata_function* function);
/* The VM signature: one character per input, '_', one per output ('i' i32,
 * 'I' i64, 'f' f32, 'F' f64, 'r' a reference such as a tensor): "r_r". */
STRATA_API const char* strata_function_signature(const strata_function* function);
STRATA_API size_t strata_function_input_count(const strata_function* function);
STRATA_API size_t strata_function_output_count(const strata_function* function);

/* The type of input or output `index` as written in the source model, when
 * the compiler recorded it ("tensor<1x784xf32>", "tensor<?x784xf32>" with a
 * dynamic dimension, "i64"); otherwise the VM type ("i32", "i64", "f32",
 * "f64", or "ref" for a reference of unknown kind). NULL for an index out of
 * range. Borrowed from the module. */
STRATA_API const char* strata_function_input_type(const strata_function* function, size_t index);
STRATA_API const char* strata_function_output_type(const strata_function* function, size_t index);

/* ------------------------------------------------------------------------ */
/* Tensors                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct strata_tensor strata_tensor;

/* Element types: (kind << 8) | bits, as in the module format. */
typedef enum strata_element_type {
  STRATA_ELEMENT_TYPE_I8 = 0x0108,
  STRATA_ELEMENT_TYPE_I16 = 0x0110,
  STRATA_ELEMENT_TYPE_I32 = 0x0120,
  STRATA_ELEMENT_TYPE_I64 = 0x0140,
  STRATA_ELEMENT_TYPE_U8 = 0x0208,
  STRATA_ELEMENT_TYPE_U16 = 0x0210,
  STRATA_ELEMENT_TYPE_U32 = 0x0220,
  STRATA_ELEMENT_TYPE_U64 = 0x0240,
  STRATA_ELEMENT_TYPE_F16 = 0x0310,
  STRATA_ELEMENT_TYPE_F32 = 0x0320,
  STRATA_ELEMENT_TYPE_F64 = 0x0340,
  STRATA_ELEMENT_TYPE_BF16 = 0x0410,
  STRATA_ELEMENT_TYPE_BOOL = 0x0508, /* i1, one byte per element, 0 or 1 */
  STRATA_ELEMENT_TYPE_MAX_ENUM = 0x7FFFFFFF /* not a type: keeps the enum 32 bits wide */
} strata_element_type;

/* The largest rank a tensor may have. */
#define STRATA_MAX_RANK 8

/* "f32", "i1" (bool), "ui8" (u8), ... as MLIR spells them; NULL for a value
 * that is no element type. Static string. */
STRATA_API const char* strata_element_type_name(strata_element_type type);
/* Bytes per element; 0 for a value that is no element type. */
STRATA_API size_t strata_element_type_size(strata_element_type type);

/* A new tensor on `device` holding a copy of `byte_length` bytes at `data`
 * (dense, row-major); `byte_length` must be exactly the product of `shape`'s
 * `rank` dimensions times the element size. `shape` may be NULL when `rank`
 * is 0 (a scalar), `data` when `byte_length` is 0. The caller's memory is
 * not used after this returns. */
STRATA_API strata_status* strata_tensor_create(strata_device* device, strata_element_type element_type,
                                               const int64_t* shape, size_t rank, const void* data,
                                               size_t byte_length, strata_tensor** out_tensor);

/* A tensor over the caller's memory, without copying: functions read `data`
 * in place. The caller keeps the memory alive, and does not write it while a
 * call that uses the tensor runs, until `release` (may be NULL) is called
 * with `user_data` once the last reference to the tensor -- including those
 * held by running work -- is gone; if this function fails, `release` is not
 * called and the memory stays the caller's. `data` must be aligned to the
 * element size. The tensor is read-only to the device: passing it where a
 * program writes its input fails that call. Every CPU device imports host
 * memory; a device that cannot (a future GPU driver without host-memory
 * import) fails with UNIMPLEMENTED, and strata_tensor_create is the way
 * there. */
STRATA_API strata_status* strata_tensor_wrap(strata_device* device, strata_element_type element_type,
                                             const int64_t* shape, size_t rank, const void* data, size_t byte_length,
                                             void (*release)(void* user_data), void* user_data,
                                             strata_tensor** out_tensor);
STRATA_API void strata_tensor_retain(strata_tensor* tensor);
STRATA_API void strata_tensor_release(strata_tensor* tensor);

STRATA_API strata_element_type strata_tensor_element_type(const strata_tensor* tensor);
STRATA_API size_t strata_tensor_rank(const strata_tensor* tensor);
/* `rank` dimensions (NULL for rank 0); borrowed from the tensor. */
STRATA_API const int64_t* strata_tensor_shape(const strata_tensor* tensor);
STRATA_API size_t strata_tensor_element_count(const strata_tensor* tensor);
STRATA_API size_t strata_tensor_byte_length(const strata_tensor* tensor);

/* Points `*out_data` at the tensor's bytes (dense, row-major), valid for as
 * long as the tensor lives, without copying. Fails with FAILED_PRECONDITION
 * for a tensor in memory the host cannot map (on GPU devices); use
 * strata_tensor_copy_out there. The bytes must not be written through this
 * pointer. */
STRATA_API strata_status* strata_tensor_data(strata_tensor* tensor, const void** out_data);

/* Copies the tensor's bytes to `buffer`, which has room for `buffer_length`
 * bytes (at least strata_tensor_byte_length). Works for every tensor. */
STRATA_API strata_status* strata_tensor_copy_out(strata_tensor* tensor, void* buffer, size_t buffer_length);

/* "tensor<1x10xf32>", written into `buffer` of `buffer_length` bytes
 * (truncated, always NUL-terminated when buffer_length > 0). Returns the
 * length of the whole string, as snprintf does. */
STRATA_API size_t strata_tensor_describe(const strata_tensor* tensor, char* buffer, size_t buffer_length);

/* ------------------------------------------------------------------------ */
/* Calls                                                                    */
/* ------------------------------------------------------------------------ */

/* Calls `function` with `input_count` borrowed input tensors and stores
 * `output_count` new tensors, owned by the caller, into `outputs`. Counts,
 * element types and shapes are checked against the function before anything
 * runs: a wrong count, a NULL input, a scalar input that is not a 0-d tensor
 * of its type, or a tensor whose type differs from the recorded source type
 * fails with INVALID_ARGUMENT naming the input and both types. Inputs may
 * live on another device of the same driver. A failure inside the program
 * (an assertion, a kernel failure, a step or memory budget) comes back with
 * the program's backtrace; `outputs` is then untouched. Thread-safe:
 * concurrent calls on one module each run in a context of their own. */
STRATA_API strata_status* strata_function_call(strata_function* function, strata_tensor* const* inputs,
                                               size_t input_count, strata_tensor** outputs, size_t output_count);

/* strata_function_call with its own limits (NULL: the module's, from
 * strata_module_options.call_limits). */
STRATA_API strata_status* strata_function_call_with_limits(strata_function* function, strata_tensor* const* inputs,
                                                           size_t input_count, strata_tensor** outputs,
                                                           size_t output_count, const strata_call_limits* limits);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* STRATA_STRATA_H_ */

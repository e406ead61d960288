//! The bytes of a value Chrome serialized: Blink's envelope around V8's format, and the tag
//! bytes of both.
//!
//! Every constant here is Chromium's or V8's, from the files named beside it:
//! V8's `src/objects/value-serializer.cc` (`SerializationTag`, `ArrayBufferViewTag`,
//! `ErrorTag`, `kLatestVersion`), Blink's
//! `third_party/blink/renderer/bindings/core/v8/serialization/serialization_tag.h` and
//! `v8_script_value_serializer.cc` / `trailer_reader.cc` (the envelope and the trailer), and
//! V8's `src/regexp/regexp-flags.h` (the RegExp flag bits).
//!
//! ```text
//! serialized value (Blink's SerializedScriptValue, wire format 21):
//!   +----+----+----+-----------------+-----------+----+----+----------+--------------+
//!   | FF | 15 | FE | trailer offset  | trailer   | FF | 10 | V8 value | trailer      |
//!   |    |    |    | u64 big-endian  | size u32  |    |    |          | (optional)   |
//!   +----+----+----+-----------------+-----------+----+----+----------+--------------+
//!    Blink     trailer tag (versions >= 21; offset and size 0 when     V8 version
//!    version   there is no trailer)                                    (varint)
//!   Blink versions 16-20: FF vv FF ww V8 value (no trailer tag);
//!   before 16 one envelope only: FF ww V8 value (Blink's version is V8's).
//!   trailer = A0 varint n, n interface tag bytes (what the value needs to be read back)
//!
//! V8 value = one tag byte and its data (padding bytes 00 before a tag are skipped):
//!   _ undefined   0 null   T true   F false   - the hole (inside dense arrays)
//!   I zigzag varint int32      U varint uint32     N f64 (little-endian)
//!   Z bitfield varint, digits  (BigInt: bit 0 sign, bits 1.. byte length; digits LE)
//!   " varint n, n Latin-1 bytes    c varint n, n bytes UTF-16LE    S varint n, n UTF-8 bytes
//!   ^ varint id                (a reference to an object read earlier)
//!   o (key value)* { varint n                        plain object, n properties
//!   A varint len, len elements, (key value)* $ varint n varint len      dense array
//!   a varint len, (key value)* @ varint n varint len                    sparse array
//!   D f64 ms    y / x Boolean objects    n f64 Number object    z BigInt object
//!   s string    String object            R string, varint flags  RegExp
//!   ; (key value)* : varint 2n    Map      ' value* , varint n   Set
//!   B varint n, n bytes   ArrayBuffer      ~ varint n, varint max, n bytes  resizable
//!   V subtag, varint offset, varint length, varint flags (>= 14): a view of the buffer
//!     just read (typed array or DataView)
//!   r error tags: E R F S T U prototype, m string message, s string stack, c value cause,
//!     . end                                                             Error
//!   \ Blink host object (Blob, File, FileList, DOMPoint, CryptoKey...: see `host.rs`)
//!   ? varint (an object count, ignored), then a value
//!   u p t w m: shared and transferred objects (never stored by IndexedDB)
//! Objects (everything from `o` down, in the order they start) are numbered from 0; `^`
//! refers to them by that number, which is how shared and cyclic references are kept.
//! ```

/// V8's newest serialization version (Chrome 156 writes 16). Version 16 writes array
/// buffer and view lengths and offsets as 64-bit varints (they were 32-bit).
pub const V8_LATEST_VERSION: u32 = 16;
/// Oldest V8 version read here (version 9 came from Blink; older data is from 2013 and
/// before).
pub const V8_OLDEST_VERSION: u32 = 9;

/// The version tag, first byte of both envelopes (`kVersion` / `kVersionTag`).
pub const TAG_VERSION: u8 = 0xFF;
/// Padding, skipped before any tag (`kPadding`).
pub const TAG_PADDING: u8 = 0x00;
/// An object count to ignore, then a value (`kVerifyObjectCount`).
pub const TAG_VERIFY_OBJECT_COUNT: u8 = b'?';
/// A missing element of a dense array (`kTheHole`).
pub const TAG_THE_HOLE: u8 = b'-';
/// `undefined` (`kUndefined`).
pub const TAG_UNDEFINED: u8 = b'_';
/// `null` (`kNull`).
pub const TAG_NULL: u8 = b'0';
/// `true` (`kTrue`).
pub const TAG_TRUE: u8 = b'T';
/// `false` (`kFalse`).
pub const TAG_FALSE: u8 = b'F';
/// A number as a zigzag varint (`kInt32`).
pub const TAG_INT32: u8 = b'I';
/// A number as a varint (`kUint32`).
pub const TAG_UINT32: u8 = b'U';
/// A number as a little-endian f64 (`kDouble`).
pub const TAG_DOUBLE: u8 = b'N';
/// A BigInt: bitfield varint, then its digits (`kBigInt`).
pub const TAG_BIGINT: u8 = b'Z';
/// A UTF-8 string (`kUtf8String`; read, no longer written).
pub const TAG_UTF8_STRING: u8 = b'S';
/// A Latin-1 string (`kOneByteString`).
pub const TAG_ONE_BYTE_STRING: u8 = b'"';
/// A UTF-16LE string (`kTwoByteString`).
pub const TAG_TWO_BYTE_STRING: u8 = b'c';
/// A reference to an object read earlier, by id (`kObjectReference`).
pub const TAG_OBJECT_REFERENCE: u8 = b'^';
/// Start of a plain object (`kBeginJSObject`).
pub const TAG_BEGIN_OBJECT: u8 = b'o';
/// End of a plain object, then its property count (`kEndJSObject`).
pub const TAG_END_OBJECT: u8 = b'{';
/// Start of a sparse array, then its length (`kBeginSparseJSArray`).
pub const TAG_BEGIN_SPARSE_ARRAY: u8 = b'a';
/// End of a sparse array, then property count and length (`kEndSparseJSArray`).
pub const TAG_END_SPARSE_ARRAY: u8 = b'@';
/// Start of a dense array, then its length and elements (`kBeginDenseJSArray`).
pub const TAG_BEGIN_DENSE_ARRAY: u8 = b'A';
/// End of a dense array, then property count and length (`kEndDenseJSArray`).
pub const TAG_END_DENSE_ARRAY: u8 = b'$';
/// A Date: milliseconds since the epoch as f64 (`kDate`).
pub const TAG_DATE: u8 = b'D';
/// `new Boolean(true)` (`kTrueObject`).
pub const TAG_TRUE_OBJECT: u8 = b'y';
/// `new Boolean(false)` (`kFalseObject`).
pub const TAG_FALSE_OBJECT: u8 = b'x';
/// A Number object: f64 (`kNumberObject`).
pub const TAG_NUMBER_OBJECT: u8 = b'n';
/// A BigInt object (`kBigIntObject`).
pub const TAG_BIGINT_OBJECT: u8 = b'z';
/// A String object (`kStringObject`).
pub const TAG_STRING_OBJECT: u8 = b's';
/// A RegExp: source string, varint flags (`kRegExp`).
pub const TAG_REGEXP: u8 = b'R';
/// Start of a Map (`kBeginJSMap`).
pub const TAG_BEGIN_MAP: u8 = b';';
/// End of a Map, then 2 x its size (`kEndJSMap`).
pub const TAG_END_MAP: u8 = b':';
/// Start of a Set (`kBeginJSSet`).
pub const TAG_BEGIN_SET: u8 = b'\'';
/// End of a Set, then its size (`kEndJSSet`).
pub const TAG_END_SET: u8 = b',';
/// An ArrayBuffer: byte length, bytes (`kArrayBuffer`).
pub const TAG_ARRAY_BUFFER: u8 = b'B';
/// A resizable ArrayBuffer: byte length, max byte length, bytes (`kResizableArrayBuffer`).
pub const TAG_RESIZABLE_ARRAY_BUFFER: u8 = b'~';
/// A transferred ArrayBuffer, by transfer id (`kArrayBufferTransfer`).
pub const TAG_ARRAY_BUFFER_TRANSFER: u8 = b't';
/// A view of the ArrayBuffer read just before (`kArrayBufferView`).
pub const TAG_ARRAY_BUFFER_VIEW: u8 = b'V';
/// A SharedArrayBuffer, by id (`kSharedArrayBuffer`).
pub const TAG_SHARED_ARRAY_BUFFER: u8 = b'u';
/// A shared object, by id (`kSharedObject`, version 15).
pub const TAG_SHARED_OBJECT: u8 = b'p';
/// A WebAssembly module, by transfer id (`kWasmModuleTransfer`).
pub const TAG_WASM_MODULE_TRANSFER: u8 = b'w';
/// An object the embedder (Blink) serialized (`kHostObject`).
pub const TAG_HOST_OBJECT: u8 = b'\\';
/// A WebAssembly.Memory (`kWasmMemoryTransfer`).
pub const TAG_WASM_MEMORY_TRANSFER: u8 = b'm';
/// An Error (`kError`).
pub const TAG_ERROR: u8 = b'r';

/// First V8 version with the explicit host object tag; before it every unknown tag was the
/// host's.
pub const V8_VERSION_HOST_OBJECT_TAG: u32 = 13;
/// First V8 version whose views carry flags (`kArrayBufferView` ... flags).
pub const V8_VERSION_VIEW_FLAGS: u32 = 14;
/// First V8 version that tells undefined from the hole in dense arrays.
pub const V8_VERSION_UNDEFINED_NOT_HOLE: u32 = 11;
/// First V8 version whose RegExp and String objects hold tagged strings (before: raw UTF-8).
pub const V8_VERSION_TAGGED_STRINGS: u32 = 12;
/// First V8 version with shared objects (`kSharedObject`).
pub const V8_VERSION_SHARED_OBJECT: u32 = 15;

/// View flag: the view tracks its buffer's length (`JSArrayBufferViewIsLengthTracking`).
pub const VIEW_FLAG_LENGTH_TRACKING: u32 = 1;
/// View flag: the view is backed by a resizable buffer (`JSArrayBufferViewIsBackedByRab`).
pub const VIEW_FLAG_BACKED_BY_RAB: u32 = 2;

/// View sub-tags: the constructor each names and its element size in bytes
/// (`ArrayBufferViewTag`; `?` is a DataView).
pub const VIEW_KINDS: [(u8, &str, u8); 13] = [
    (b'b', "Int8Array", 1),
    (b'B', "Uint8Array", 1),
    (b'C', "Uint8ClampedArray", 1),
    (b'w', "Int16Array", 2),
    (b'W', "Uint16Array", 2),
    (b'd', "Int32Array", 4),
    (b'D', "Uint32Array", 4),
    (b'h', "Float16Array", 2),
    (b'f', "Float32Array", 4),
    (b'F', "Float64Array", 8),
    (b'q', "BigInt64Array", 8),
    (b'Q', "BigUint64Array", 8),
    (b'?', "DataView", 1),
];

/// Error prototype sub-tags and the constructor names they stand for (`ErrorTag`).
pub const ERROR_PROTOTYPES: [(u8, &str); 6] = [
    (b'E', "EvalError"),
    (b'R', "RangeError"),
    (b'F', "ReferenceError"),
    (b'S', "SyntaxError"),
    (b'T', "TypeError"),
    (b'U', "URIError"),
];
/// Error sub-tag: the message string follows (`kMessage`).
pub const ERROR_MESSAGE: u8 = b'm';
/// Error sub-tag: the cause value follows (`kCause`).
pub const ERROR_CAUSE: u8 = b'c';
/// Error sub-tag: the stack string follows (`kStack`).
pub const ERROR_STACK: u8 = b's';
/// Error sub-tag: end of the error (`kEnd`).
pub const ERROR_END: u8 = b'.';

/// RegExp flag bits and their letters, in the order `RegExp.prototype.flags` writes them
/// (V8's `REGEXP_FLAG_LIST`: alphabetical by letter).
pub const REGEXP_FLAGS: [(u32, char); 9] = [
    (1 << 7, 'd'),
    (1 << 0, 'g'),
    (1 << 1, 'i'),
    (1 << 6, 'l'),
    (1 << 2, 'm'),
    (1 << 5, 's'),
    (1 << 4, 'u'),
    (1 << 8, 'v'),
    (1 << 3, 'y'),
];
/// The `l` (linear engine) flag, refused by V8 unless an experimental flag is on.
pub const REGEXP_FLAG_LINEAR: u32 = 1 << 6;
/// Number of RegExp flag bits (`kFlagCount`); higher bits are refused.
pub const REGEXP_FLAG_COUNT: u32 = 9;

/// Blink's first version with its own envelope (`kMinVersionForSeparateEnvelope`).
pub const BLINK_SEPARATE_ENVELOPE: u32 = 16;
/// Blink's first version with the trailer offset tag (`kMinWireFormatVersion` of
/// `trailer_reader.cc`).
pub const BLINK_TRAILER_VERSION: u32 = 21;
/// Blink's newest wire format version (`SerializedScriptValue::kWireFormatVersion`).
pub const BLINK_LATEST_VERSION: u32 = 21;
/// The trailer offset tag after Blink's version (`kTrailerOffsetTag`).
pub const TAG_TRAILER_OFFSET: u8 = 0xFE;
/// Start of the trailer's list of required interfaces (`kTrailerRequiresInterfacesTag`).
pub const TAG_TRAILER_REQUIRES_INTERFACES: u8 = 0xA0;
/// Bytes of the trailer offset field: the tag, a u64 offset and a u32 size.
pub const TRAILER_OFFSET_FIELD_LEN: usize = 1 + 8 + 4;

/// Blink's host object tags (after V8's `\`), with the interface each stands for
/// (`SerializationTag` in Blink's `serialization_tag.h`). What follows each tag is read in
/// `host.rs`; the layouts are Blink's `V8ScriptValueDeserializer::ReadDOMObject` and
/// `V8ScriptValueDeserializerForModules::ReadDOMObject`.
pub mod host_tag {
    /// `uuid:utf8, type:utf8, size:varint64` (a Blob outside IndexedDB).
    pub const BLOB: u8 = b'b';
    /// `index:varint` into the record's blob list (IndexedDB's Blobs).
    pub const BLOB_INDEX: u8 = b'i';
    /// A File written in full (`path, name, relative path, uuid, type, ...`).
    pub const FILE: u8 = b'f';
    /// `index:varint` into the record's blob list (IndexedDB's Files).
    pub const FILE_INDEX: u8 = b'e';
    /// `length:varint`, then `length` Files written in full.
    pub const FILE_LIST: u8 = b'l';
    /// `length:varint`, then `length` indexes into the record's blob list.
    pub const FILE_LIST_INDEX: u8 = b'L';
    /// `type:varint, name:utf8, root url:utf8`.
    pub const DOM_FILE_SYSTEM: u8 = b'd';
    /// `name:utf8, token index:varint` (File System Access).
    pub const FILE_SYSTEM_FILE_HANDLE: u8 = b'n';
    /// `name:utf8, token index:varint` (File System Access).
    pub const FILE_SYSTEM_DIRECTORY_HANDLE: u8 = b'N';
    /// Image tags (up to 0), width, height, `length:varint64`, pixels.
    pub const IMAGE_DATA: u8 = b'#';
    /// Image tags (up to 0), width, height, `length:varint`, pixels.
    pub const IMAGE_BITMAP: u8 = b'g';
    /// `x, y, z, w`: four f64.
    pub const DOM_POINT: u8 = b'Q';
    /// `x, y, z, w`: four f64.
    pub const DOM_POINT_READ_ONLY: u8 = b'W';
    /// `x, y, width, height`: four f64.
    pub const DOM_RECT: u8 = b'E';
    /// `x, y, width, height`: four f64.
    pub const DOM_RECT_READ_ONLY: u8 = b'R';
    /// Four points of four f64.
    pub const DOM_QUAD: u8 = b'T';
    /// `m11..m44`: sixteen f64.
    pub const DOM_MATRIX: u8 = b'Y';
    /// `m11..m44`: sixteen f64.
    pub const DOM_MATRIX_READ_ONLY: u8 = b'U';
    /// `a..f`: six f64.
    pub const DOM_MATRIX_2D: u8 = b'I';
    /// `a..f`: six f64.
    pub const DOM_MATRIX_2D_READ_ONLY: u8 = b'O';
    /// Sub-tag byte, its parameters, usages, key data (Web Crypto).
    pub const CRYPTO_KEY: u8 = b'K';
    /// `private key PEM:utf8, certificate PEM:utf8`.
    pub const RTC_CERTIFICATE: u8 = b'k';
    /// `name:utf8, message:utf8, stack:utf8 (unused)`.
    pub const DOM_EXCEPTION: u8 = b'x';
    /// `crop id:utf8`.
    pub const CROP_TARGET: u8 = b'c';
    /// `restriction id:utf8`.
    pub const RESTRICTION_TARGET: u8 = b'D';
    /// Tags followed by one `index:varint` of something transferred with the value (never
    /// stored by IndexedDB), with the interface names.
    pub const TRANSFERRED: [(u8, &str); 14] = [
        (b'M', "MessagePort"),
        (b'h', "MojoHandle"),
        (b'G', "ImageBitmap"),
        (b'r', "ReadableStream"),
        (b'm', "TransformStream"),
        (b'w', "WritableStream"),
        (b'A', "RTCEncodedAudioFrame"),
        (b'V', "RTCEncodedVideoFrame"),
        (b'a', "AudioData"),
        (b'v', "VideoFrame"),
        (b'y', "EncodedAudioChunk"),
        (b'z', "EncodedVideoChunk"),
        (b'S', "MediaSourceHandle"),
        (b'H', "OffscreenCanvas"),
    ];
    /// Tags whose layout is not decoded here (transfer-only or retired), with their names.
    pub const NOT_DECODED: [(u8, &str); 5] = [
        (b's', "MediaStreamTrack"),
        (b'C', "FencedFrameConfig"),
        (b'B', "DetectedBarcode"),
        (b'F', "DetectedFace"),
        (b't', "DetectedText"),
    ];

    /// Image serialization tags (Blink's `ImageSerializationTag`, `serialized_params.h`),
    /// each followed by one varint but 7: 0 ends the list; 1 color space, 2 pixel format
    /// (ImageBitmap), 3 pixel or storage format (ImageData), 4 origin clean,
    /// 5 premultiplied, 6 opacity mode, 7 a parametric color space (16 f64: the transfer
    /// function g, a, b, c, d, e, f, then the 3x3 matrix to XYZ D50, by rows; ImageBitmap),
    /// 8 orientation (ImageBitmap).
    pub const IMAGE_TAG_END: u32 = 0;
    /// The predefined color space tag.
    pub const IMAGE_TAG_COLOR_SPACE: u32 = 1;
    /// The ImageBitmap pixel format tag.
    pub const IMAGE_TAG_PIXEL_FORMAT: u32 = 2;
    /// The origin-clean flag tag.
    pub const IMAGE_TAG_ORIGIN_CLEAN: u32 = 4;
    /// The premultiplied flag tag.
    pub const IMAGE_TAG_PREMULTIPLIED: u32 = 5;
    /// The opacity mode tag.
    pub const IMAGE_TAG_OPACITY_MODE: u32 = 6;
    /// The parametric color space tag: 16 f64 follow.
    pub const IMAGE_TAG_PARAMETRIC_COLOR_SPACE: u32 = 7;
    /// The orientation tag.
    pub const IMAGE_TAG_ORIENTATION: u32 = 8;
    /// Last image tag Blink reads (`ImageSerializationTag::kLast`).
    pub const IMAGE_TAG_LAST: u32 = 8;
    /// The f64s of a parametric color space (`kSerializedParametricColorSpaceLength`).
    pub const IMAGE_PARAMETRIC_COLOR_SPACE_LEN: usize = 16;
    /// `SerializedPredefinedColorSpace`, by the names JavaScript gives them (0, the
    /// obsolete legacy space, reads as sRGB).
    pub const IMAGE_COLOR_SPACES: [(u32, &str); 7] = [
        (0, "srgb"),
        (1, "srgb"),
        (2, "rec2020"),
        (3, "display-p3"),
        (4, "rec2100-hlg"),
        (5, "rec2100-pq"),
        (6, "srgb-linear"),
    ];
    /// `SerializedPixelFormat` (ImageBitmap): the pixels' layout. 0, the obsolete native
    /// format, is Skia's N32 (BGRA8 on little-endian Linux, Windows, macOS).
    pub const IMAGE_PIXEL_FORMATS: [(u32, &str); 5] = [
        (0, "native8"),
        (1, "F16"),
        (2, "RGBA8"),
        (3, "BGRA8"),
        (4, "RGBX8"),
    ];
    /// `SerializedOpacityMode`.
    pub const IMAGE_OPACITY_MODES: [(u32, &str); 2] = [(0, "non-opaque"), (1, "opaque")];
    /// `SerializedImageOrientation`: where the first pixel is.
    pub const IMAGE_ORIENTATIONS: [(u32, &str); 8] = [
        (0, "top-left"),
        (1, "top-right"),
        (2, "bottom-right"),
        (3, "bottom-left"),
        (4, "left-top"),
        (5, "right-top"),
        (6, "right-bottom"),
        (7, "left-bottom"),
    ];
    /// Blink version from which images carry the tag list (before: fixed fields).
    pub const IMAGE_TAGS_VERSION: u32 = 18;
}

/// Web Crypto key sub-tags and parameters (Blink's `web_crypto_sub_tags.h`).
pub mod crypto {
    /// AES key: algorithm id, key length in bytes.
    pub const AES_KEY: u8 = 1;
    /// HMAC key: key length in bytes, hash id.
    pub const HMAC_KEY: u8 = 2;
    /// RSA key: algorithm id, key type, modulus bits, exponent, hash id.
    pub const RSA_HASHED_KEY: u8 = 4;
    /// EC key: algorithm id, key type, named curve.
    pub const EC_KEY: u8 = 5;
    /// A key with no parameters: algorithm id.
    pub const NO_PARAMS_KEY: u8 = 6;
    /// Ed25519 key: algorithm id, key type.
    pub const ED25519_KEY: u8 = 7;

    /// Algorithm ids and Web Crypto's names for them (`CryptoKeyAlgorithmTag`).
    pub const ALGORITHMS: [(u32, &str); 18] = [
        (1, "AES-CBC"),
        (2, "HMAC"),
        (3, "RSASSA-PKCS1-v1_5"),
        (5, "SHA-1"),
        (6, "SHA-256"),
        (7, "SHA-384"),
        (8, "SHA-512"),
        (9, "AES-GCM"),
        (10, "RSA-OAEP"),
        (11, "AES-CTR"),
        (12, "AES-KW"),
        (13, "RSA-PSS"),
        (14, "ECDSA"),
        (15, "ECDH"),
        (16, "HKDF"),
        (17, "PBKDF2"),
        (18, "Ed25519"),
        (19, "X25519"),
    ];
    /// Asymmetric key types (`AsymmetricCryptoKeyType`).
    pub const KEY_TYPES: [(u32, &str); 2] = [(1, "public"), (2, "private")];
    /// Named curves (`NamedCurveTag`).
    pub const CURVES: [(u32, &str); 3] = [(1, "P-256"), (2, "P-384"), (3, "P-521")];
    /// Usage bits (`CryptoKeyUsage`); bit 0 is "extractable".
    pub const USAGES: [(u32, &str); 8] = [
        (1 << 1, "encrypt"),
        (1 << 2, "decrypt"),
        (1 << 3, "sign"),
        (1 << 4, "verify"),
        (1 << 5, "deriveKey"),
        (1 << 6, "wrapKey"),
        (1 << 7, "unwrapKey"),
        (1 << 8, "deriveBits"),
    ];
    /// The extractable bit of the usages.
    pub const EXTRACTABLE: u32 = 1;
}

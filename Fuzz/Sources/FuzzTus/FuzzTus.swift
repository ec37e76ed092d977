import HTTPCore
import Resumable

/// tus request heads, `Upload-Metadata` values and upload records on arbitrary bytes. The
/// first byte picks the method; the rest is a path line, then `name: value` lines (a request
/// read with `TusRequest.read` at `/files`), and also, whole, a metadata value and a record.
/// Properties: an id a request names is 32 lowercase hex digits (nothing else ever names a
/// store file); offsets and lengths are within 0...max; metadata that parses serializes to
/// what parses to the same pairs; a record that decodes encodes to what decodes to itself.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTus(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let methods = ["POST", "HEAD", "PATCH", "DELETE", "OPTIONS", "GET"]
    let rest = Array(bytes.dropFirst())
    let lines = rest.split(separator: 0x0A, omittingEmptySubsequences: false)
    var headers = HeaderFields()
    for line in lines.dropFirst() {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
        let value = line[(colon + 1)...].drop { $0 == 0x20 }
        headers.append(HeaderFields.Field(name: Array(line[..<colon]), value: Array(value)))
    }
    let maxSize: Int64 = 1 << 30
    if let request = try? TusRequest.read(
        method: methods[Int(bytes[0]) % methods.count],
        path: String(decoding: lines.first ?? [], as: UTF8.self),
        headers: headers, prefix: "/files", maxSize: maxSize)
    {
        func named(_ id: UploadID) -> Bool {
            id.hex.utf8.count == 32 && id.hex.utf8.allSatisfy { Hex.digits.contains($0) }
        }
        switch request {
        case .head(let id), .delete(let id):
            precondition(named(id), "an id that is not 32 hex digits")
        case .patch(let patch):
            precondition(named(patch.id), "an id that is not 32 hex digits")
            precondition(patch.offset >= 0 && (patch.length ?? 0) >= 0 && (patch.length ?? 0) <= maxSize)
        case .create(let creation):
            precondition((0...maxSize).contains(creation.length ?? 0), "a length out of range")
        case .options:
            break
        }
    }
    if let metadata = try? UploadMetadata.parse(rest) {
        let again = try? UploadMetadata.parse(Array(metadata.serialized.utf8))
        precondition(again == metadata, "metadata does not survive serialization")
    }
    if let info = try? UploadInfo.decode(rest) {
        precondition((try? UploadInfo.decode(info.encoded)) == info, "a record does not survive encoding")
    }
    return 0
}

import CNghttp2

/// One HTTP/2 frame as the server wrote it.
struct Frame: Equatable {
    var type: UInt8
    var flags: UInt8
    var streamID: Int32
    var payload: [UInt8]

    static let data: UInt8 = 0x0
    static let headers: UInt8 = 0x1
    static let rstStream: UInt8 = 0x3
    static let settings: UInt8 = 0x4
    static let ping: UInt8 = 0x6
    static let goaway: UInt8 = 0x7
    static let windowUpdate: UInt8 = 0x8
    static let continuation: UInt8 = 0x9

    static let endStream: UInt8 = 0x1
    static let ack: UInt8 = 0x1
    static let endHeaders: UInt8 = 0x4

    /// The 32-bit word at `offset` of the payload (RST_STREAM's code, GOAWAY's fields).
    func word(at offset: Int) -> UInt32 {
        payload[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The error code of an RST_STREAM or GOAWAY.
    var errorCode: UInt32 { type == Self.goaway ? word(at: 4) : word(at: 0) }

    /// GOAWAY's last stream id.
    var lastStreamID: Int32 { Int32(bitPattern: word(at: 0) & 0x7fff_ffff) }

    /// Splits the bytes of whole frames.
    static func parse(_ bytes: [UInt8]) -> [Frame] {
        var frames: [Frame] = []
        var offset = 0
        while offset + 9 <= bytes.count {
            let length = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
            let stream =
                bytes[offset + 5..<offset + 9].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } & 0x7fff_ffff
            precondition(offset + 9 + length <= bytes.count, "a partial frame in the server's output")
            frames.append(
                Frame(
                    type: bytes[offset + 3], flags: bytes[offset + 4], streamID: Int32(stream),
                    payload: Array(bytes[offset + 9..<offset + 9 + length])))
            offset += 9 + length
        }
        return frames
    }
}

/// Writes raw client frames, hostile ones included: HPACK through libnghttp2's deflater,
/// which encodes whatever names it is given (uppercase, pseudo-headers anywhere).
final class FrameWriter {
    private(set) var bytes: [UInt8] = []
    private let deflater: OpaquePointer

    init() {
        var made: OpaquePointer?
        precondition(nghttp2_hd_deflate_new(&made, 4096) == 0)
        deflater = made!
    }

    deinit {
        nghttp2_hd_deflate_del(deflater)
    }

    /// Takes the bytes written so far.
    func take() -> [UInt8] {
        defer { bytes = [] }
        return bytes
    }

    /// The client connection preface and an empty SETTINGS.
    func preface() {
        bytes += Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
        settings([])
    }

    func frame(_ type: UInt8, flags: UInt8 = 0, stream: Int32, _ payload: [UInt8] = []) {
        let length = payload.count
        bytes += [UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff), type, flags]
        bytes += Self.word(UInt32(stream))
        bytes += payload
    }

    /// An HPACK block for `fields`, in order and as spelled.
    func headerBlock(_ fields: [(String, String)]) -> [UInt8] {
        withNV(fields) { list in
            let bound = nghttp2_hd_deflate_bound(deflater, list.baseAddress, list.count)
            var block = [UInt8](repeating: 0, count: bound)
            let written = nghttp2_hd_deflate_hd(deflater, &block, bound, list.baseAddress, list.count)
            precondition(written >= 0)
            return Array(block[..<written])
        }
    }

    /// A request's pseudo-headers, valid unless a case changes them.
    static func request(method: String = "GET", path: String = "/") -> [(String, String)] {
        [(":method", method), (":scheme", "https"), (":authority", "example.test"), (":path", path)]
    }

    func headers(stream: Int32, _ fields: [(String, String)], endStream: Bool = true) {
        frame(
            Frame.headers, flags: Frame.endHeaders | (endStream ? Frame.endStream : 0), stream: stream,
            headerBlock(fields))
    }

    func data(stream: Int32, _ payload: [UInt8], endStream: Bool = false) {
        frame(Frame.data, flags: endStream ? Frame.endStream : 0, stream: stream, payload)
    }

    func rstStream(stream: Int32, code: UInt32) {
        frame(Frame.rstStream, stream: stream, Self.word(code))
    }

    func windowUpdate(stream: Int32, increment: UInt32) {
        frame(Frame.windowUpdate, stream: stream, Self.word(increment))
    }

    func settings(_ entries: [(UInt16, UInt32)]) {
        frame(
            Frame.settings, stream: 0,
            entries.flatMap { [UInt8($0.0 >> 8), UInt8($0.0 & 0xff)] + Self.word($0.1) })
    }

    func ping(ack: Bool = false, _ opaque: [UInt8] = [UInt8](repeating: 7, count: 8)) {
        frame(Frame.ping, flags: ack ? Frame.ack : 0, stream: 0, opaque)
    }

    static func word(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24 & 0xff), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
    }
}

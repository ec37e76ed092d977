import ProxyCore

/// An upload in flight as a board slot holds it: fixed-size words (`LiveBoard`), written by
/// the worker's loop, decoded by the admin thread.
struct LiveRecord: Equatable {
    /// Data words of a slot: 7 numbers, then the strings (54 words).
    static let words = 7 + (64 + 64 + 48 + 64 + 64 + 128) / 8

    /// Unique per worker and upload (0: a free slot).
    var serial: UInt64
    var status: LiveStatus
    /// The client's numeric address.
    var client: String
    var startedUnixMilliseconds: Int64

    init(serial: UInt64, status: LiveStatus, client: String, startedUnixMilliseconds: Int64) {
        self.serial = serial
        self.status = status
        self.client = client
        self.startedUnixMilliseconds = startedUnixMilliseconds
    }

    func encode(into words: inout [UInt64]) {
        words.withUnsafeMutableBytes { encode(WordWriter($0)) }
    }

    private func encode(_ start: WordWriter) {
        var writer = start
        writer.number(Int64(bitPattern: serial))
        writer.number(Int64(status.http2 ? 1 : 0) | Int64(status.stage.rawValue) << 8)
        writer.number(startedUnixMilliseconds)
        writer.number(status.bytesIn)
        writer.number(status.bytesExpected)
        writer.number(status.tusOffset)
        writer.number(status.tusLength)
        writer.string(status.requestID, bytes: 64)
        writer.string(status.route, bytes: 64)
        writer.string(client, bytes: 48)
        writer.string(status.identity, bytes: 64)
        writer.string(status.partName, bytes: 64)
        writer.string(status.partFilename, bytes: 128)
    }

    /// The record in `words`; `nil` when they hold no upload.
    init?(decoding words: [UInt64]) {
        var reader = WordReader(words: words)
        serial = UInt64(bitPattern: reader.number() ?? 0)
        let flags = reader.number() ?? 0
        guard serial != 0, let stage = LiveStatus.Stage(rawValue: UInt8(truncatingIfNeeded: flags >> 8))
        else {
            return nil
        }
        startedUnixMilliseconds = reader.number() ?? 0
        let bytesIn = reader.number() ?? 0
        let expected = reader.number()
        let tusOffset = reader.number()
        let tusLength = reader.number()
        let id = reader.string(bytes: 64) ?? ""
        let route = reader.string(bytes: 64)
        status = LiveStatus(
            requestID: id, route: route, http2: flags & 1 == 1, startedAt: 0, stage: stage, bytesIn: bytesIn)
        status.bytesExpected = expected
        status.tusOffset = tusOffset
        status.tusLength = tusLength
        client = reader.string(bytes: 48) ?? ""
        status.identity = reader.string(bytes: 64)
        status.partName = reader.string(bytes: 64)
        status.partFilename = reader.string(bytes: 128)
    }
}

/// A finished upload as the board's ring holds it.
struct LiveFinishedRecord: Equatable {
    /// Data words of a ring slot: 6 numbers, then the strings (32 words).
    static let words = 6 + (64 + 64 + 128) / 8

    /// Increasing per worker (0: an empty slot).
    var serial: UInt64
    var requestID: String
    var route: String?
    var status: Int
    var durationMilliseconds: Int64
    var bytesIn: Int64
    var error: String?
    var finishedUnixMilliseconds: Int64

    init(serial: UInt64, record: AccessRecord, finishedUnixMilliseconds: Int64) {
        self.serial = serial
        requestID = record.requestID ?? ""
        route = record.route
        status = record.status
        durationMilliseconds = record.finishedAt - record.startedAt
        bytesIn = record.bytesIn
        error = record.error
        self.finishedUnixMilliseconds = finishedUnixMilliseconds
    }

    func encode(into words: inout [UInt64]) {
        words.withUnsafeMutableBytes { encode(WordWriter($0)) }
    }

    private func encode(_ start: WordWriter) {
        var writer = start
        writer.number(Int64(bitPattern: serial))
        writer.number(Int64(status))
        writer.number(durationMilliseconds)
        writer.number(bytesIn)
        writer.number(finishedUnixMilliseconds)
        writer.number(0)
        writer.string(requestID, bytes: 64)
        writer.string(route, bytes: 64)
        writer.string(error, bytes: 128)
    }

    init(decoding words: [UInt64]) {
        var reader = WordReader(words: words)
        serial = UInt64(bitPattern: reader.number() ?? 0)
        status = Int(reader.number() ?? 0)
        durationMilliseconds = reader.number() ?? 0
        bytesIn = reader.number() ?? 0
        finishedUnixMilliseconds = reader.number() ?? 0
        _ = reader.number()
        requestID = reader.string(bytes: 64) ?? ""
        route = reader.string(bytes: 64)
        error = reader.string(bytes: 128)
    }
}

/// Writes numbers and strings into 64-bit words in order, without allocating. A number
/// `nil` is `Int64.min`; a string takes a field of `bytes` (a multiple of 8): its length,
/// then its UTF-8 (cut at a character boundary to fit), a length of 255 for `nil`.
struct WordWriter {
    let raw: UnsafeMutableRawBufferPointer
    private var position = 0

    init(_ raw: UnsafeMutableRawBufferPointer) {
        self.raw = raw
    }

    mutating func number(_ value: Int64?) {
        raw.storeBytes(
            of: UInt64(bitPattern: value ?? Int64.min), toByteOffset: position * 8, as: UInt64.self)
        position += 1
    }

    mutating func string(_ value: String?, bytes: Int) {
        let start = position * 8
        position += bytes / 8
        let field = raw.baseAddress! + start
        // One pass over the field, not a byte at a time (this runs for every finished upload).
        field.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
        guard var value else {
            raw[start] = 255
            return
        }
        value.withUTF8 { utf8 in
            var count = min(utf8.count, bytes - 1)
            if count < utf8.count {
                // The first byte left out must begin a character.
                while count > 0, utf8[count] & 0xC0 == 0x80 { count -= 1 }
            }
            raw[start] = UInt8(count)
            if count > 0 { (field + 1).copyMemory(from: utf8.baseAddress!, byteCount: count) }
        }
    }
}

/// Reads what a `WordWriter` wrote.
struct WordReader {
    let words: [UInt64]
    private var position = 0

    init(words: [UInt64]) {
        self.words = words
    }

    mutating func number() -> Int64? {
        defer { position += 1 }
        let value = Int64(bitPattern: words[position])
        return value == Int64.min ? nil : value
    }

    mutating func string(bytes: Int) -> String? {
        let start = position * 8
        position += bytes / 8
        return words.withUnsafeBytes { raw in
            let count = Int(raw[start])
            guard count != 255 else { return nil }
            return String(decoding: raw[(start + 1)..<(start + 1 + min(count, bytes - 1))], as: UTF8.self)
        }
    }
}

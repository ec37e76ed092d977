import CCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// The client's TLS 1.3 records on an accepted connection, read and decrypted by FormGate
/// once OpenSSL has finished the handshake (what kernel TLS does for a server that has it;
/// RFC 8446 §5): `read(2)` into a staging buffer, each record's AEAD opened with OpenSSL's
/// EVP straight into the caller's buffer. OpenSSL's `SSL_read` decrypts into its own record
/// buffer and copies out, and its read-ahead moves the unread bytes to the buffer's front
/// before each record; here only a partial record left at the end of a read moves.
/// OpenSSL keeps the sending side (`SSL_write`, close_notify, the KeyUpdate this side owes).
///
/// Refused as RFC 8446 requires, each ending the connection: a record that is not
/// application_data outside (a change_cipher_spec after the handshake is one), longer than
/// 2^14 + 256 bytes, or shorter than its tag and content type; one that fails
/// authentication; an inner plaintext over 2^14 + 1 bytes or without a content type; a
/// handshake message other than KeyUpdate (a KeyUpdate must fill its record: the key
/// changes after it); an alert other than close_notify and user_canceled; more than 32
/// empty records in a row (OpenSSL's limit). close_notify is the end of the input.
final class TLSRecordReader {
    /// The TLS 1.3 cipher suites whose AEAD this reader opens, by IANA number.
    enum Suite: UInt16 {
        case aes128GCMSHA256 = 0x1301
        case aes256GCMSHA384 = 0x1302
        case chacha20Poly1305SHA256 = 0x1303

        var cipher: OpaquePointer? {
            switch self {
            case .aes128GCMSHA256: EVP_aes_128_gcm()
            case .aes256GCMSHA384: EVP_aes_256_gcm()
            case .chacha20Poly1305SHA256: EVP_chacha20_poly1305()
            }
        }

        var digest: OpaquePointer? { self == .aes256GCMSHA384 ? EVP_sha384() : EVP_sha256() }
        var keyLength: Int { self == .aes128GCMSHA256 ? 16 : 32 }
    }

    /// Why the reader ended the connection (for `failureDescription`), once it has.
    private(set) var failure: String?
    /// The peer asked for a KeyUpdate (`update_requested`): the sending side owes one before
    /// its next application data (RFC 8446 §4.6.3).
    var keyUpdateOwed = false

    private let suite: Suite
    private let context: OpaquePointer
    /// The current client_application_traffic_secret_N.
    private var secret: [UInt8]
    private var iv = [UInt8](repeating: 0, count: ivLength)
    /// The per-record nonce: `iv` with the sequence number mixed in (RFC 8446 §5.3).
    private let nonce: UnsafeMutablePointer<UInt8>
    /// The sequence number of the next record under the current key.
    private var sequence: UInt64 = 0
    private var emptyRecords = 0
    private var closed = false

    /// Ciphertext read from the socket and not yet opened: `[start, end)` of `staging`,
    /// allocated when a read needs it and freed whenever it empties (an idle connection holds
    /// none).
    private var staging: UnsafeMutablePointer<UInt8>?
    private var start = 0
    private var end = 0
    /// A record opened in place because the caller had no room for it: its plaintext,
    /// `[plainStart, plainEnd)` of `staging`, goes out before anything else.
    private var plainStart = 0
    private var plainEnd = 0

    static let headerLength = 5
    static let tagLength = 16
    static let ivLength = 12
    /// The longest ciphertext a record may carry (RFC 8446 §5.2).
    static let maximumCiphertext = (1 << 14) + 256
    /// The longest TLSInnerPlaintext: content, content type and padding (RFC 8446 §5.4).
    static let maximumInnerPlaintext = (1 << 14) + 1
    static let maximumEmptyRecords = 32
    /// Staging, the size of OpenSSL's read-ahead buffer here: one `read(2)` takes up to four
    /// records; a partial record left at the end moves to the front before the next read.
    static let stagingSize = 64 * 1024 + 512

    /// A reader for the client's records under `secret` (client_application_traffic_secret_0,
    /// wiped here after use), starting at sequence number 0; nil when OpenSSL cannot make the
    /// cipher.
    init?(suite: Suite, secret: [UInt8]) {
        guard let cipher = suite.cipher, let context = EVP_CIPHER_CTX_new() else { return nil }
        guard EVP_DecryptInit_ex(context, cipher, nil, nil, nil) == 1 else {
            EVP_CIPHER_CTX_free(context)
            return nil
        }
        self.suite = suite
        self.context = context
        self.secret = secret
        nonce = .allocate(capacity: Self.ivLength)
        // Failing now, deinit frees what was made.
        guard installKeys() else { return nil }
    }

    deinit {
        EVP_CIPHER_CTX_free(context)
        secret.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
        iv.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
        OPENSSL_cleanse(nonce, Self.ivLength)
        nonce.deallocate()
        releaseStaging()
    }

    /// Whether a read now would return something without the socket becoming readable: a
    /// whole record staged, or plaintext waiting.
    var hasBufferedInput: Bool {
        if plainEnd > plainStart { return true }
        if case .complete = nextRecordLength() { return true }
        return false
    }

    /// Reads and opens records into `output` (`room` bytes) until the socket has no more or
    /// `room` is full. Returns the plaintext bytes stored and how the read ended: nil when it
    /// stopped for want of room, `.blocked(.readable)` when the socket had no more,
    /// `.endOfFile` at close_notify, `.failed` on a refused record or a socket error.
    func read(_ fd: Int32, into output: UnsafeMutablePointer<UInt8>, room: Int) -> (Int, TransportStatus?) {
        if failure != nil { return (0, .failed(code: EPROTO)) }
        if closed { return (0, .endOfFile) }
        var filled = 0
        if plainEnd > plainStart, let staging {
            let count = min(plainEnd - plainStart, room)
            output.update(from: staging + plainStart, count: count)
            plainStart += count
            filled = count
            guard plainStart == plainEnd else { return (filled, nil) }
            plainStart = 0
            plainEnd = 0
        }
        while filled < room {
            switch nextRecordLength() {
            case .failed(let reason):
                return (filled, fail(reason))
            case .complete(let length):
                if room - filled >= length - Self.tagLength {
                    switch open(length, into: output + filled) {
                    case .failure(let refusal): return (filled, fail(refusal.reason))
                    case .success(let count?): filled += count
                    case .success(nil): if closed { return (filled, .endOfFile) }
                    }
                } else if filled > 0 {
                    return (filled, nil)
                } else {
                    // No room for the whole record: open it where it lies and hand out what
                    // fits; the rest goes first on the next read.
                    guard let staging else { return (filled, fail("no staging buffer")) }
                    let plaintext = start + Self.headerLength
                    switch open(length, into: staging + plaintext) {
                    case .failure(let refusal): return (filled, fail(refusal.reason))
                    case .success(nil): if closed { return (filled, .endOfFile) }
                    case .success(let count?):
                        let delivered = min(count, room)
                        output.update(from: staging + plaintext, count: delivered)
                        filled = delivered
                        if delivered < count {
                            plainStart = plaintext + delivered
                            plainEnd = plaintext + count
                            return (filled, nil)
                        }
                    }
                }
            case .incomplete:
                switch receive(fd) {
                case .moved: continue
                case let status:
                    if start == end { releaseStaging() }
                    return (filled, status)
                }
            }
        }
        return (filled, nil)
    }

    /// What `open` made of a record: its application data's length, nil, or a refusal.
    private typealias Opened = Result<Int?, RecordFailure>

    private enum Next {
        case complete(Int)
        case incomplete
        case failed(String)
    }

    /// The ciphertext length of the staged record when it is all there.
    private func nextRecordLength() -> Next {
        guard end - start >= Self.headerLength, let staging else { return .incomplete }
        let header = staging + start
        // A change_cipher_spec or a plaintext record after the handshake is unexpected
        // (RFC 8446 §5); the legacy version is ignored (§5.1).
        guard header[0] == 23 else { return .failed("unexpected record type \(header[0])") }
        let length = Int(header[3]) << 8 | Int(header[4])
        guard length <= Self.maximumCiphertext else { return .failed("record overflow") }
        guard length > Self.tagLength else { return .failed("record too short") }
        return end - start >= Self.headerLength + length ? .complete(length) : .incomplete
    }

    /// Opens the staged record of `length` ciphertext bytes into `plaintext` (room for
    /// `length - tagLength` bytes; may be where the ciphertext lies) and acts on its content
    /// type: the application data's length, or nil for a record that carried none (a
    /// KeyUpdate, an ignored alert, close_notify, an empty record).
    private func open(_ length: Int, into plaintext: UnsafeMutablePointer<UInt8>) -> Opened {
        guard let staging, sequence < UInt64.max else { return .failure("sequence number exhausted") }
        let header = staging + start
        let sealed = length - Self.tagLength
        iv.withUnsafeBufferPointer { iv in
            for index in 0..<Self.ivLength - 8 { nonce[index] = iv[index] }
            for index in 0..<8 {
                let position = Self.ivLength - 1 - index
                nonce[position] = iv[position] ^ UInt8(truncatingIfNeeded: sequence >> (8 * UInt64(index)))
            }
        }
        var count: Int32 = 0
        var final: Int32 = 0
        guard EVP_DecryptInit_ex(context, nil, nil, nil, nonce) == 1,
            EVP_DecryptUpdate(context, nil, &count, header, Int32(Self.headerLength)) == 1,
            EVP_DecryptUpdate(context, plaintext, &count, header + Self.headerLength, Int32(sealed)) == 1,
            EVP_CIPHER_CTX_ctrl(
                context, EVP_CTRL_AEAD_SET_TAG, Int32(Self.tagLength), header + Self.headerLength + sealed)
                == 1,
            EVP_DecryptFinal_ex(context, plaintext + Int(count), &final) == 1
        else {
            ERR_clear_error()
            return .failure("bad record mac")
        }
        sequence += 1
        start += Self.headerLength + length
        guard sealed <= Self.maximumInnerPlaintext else { return .failure("record overflow") }
        var inner = sealed
        while inner > 0, plaintext[inner - 1] == 0 { inner -= 1 }
        guard inner > 0 else { return .failure("record without a content type") }
        let type = plaintext[inner - 1]
        inner -= 1
        switch type {
        case 23:
            guard inner == 0 else {
                emptyRecords = 0
                return .success(inner)
            }
            emptyRecords += 1
            guard emptyRecords <= Self.maximumEmptyRecords else { return .failure("too many empty records") }
            return .success(nil)
        case 22:
            // Only a KeyUpdate may follow the handshake from a client FormGate does not ask
            // to authenticate after it, and it ends its record.
            guard inner == 5, plaintext[0] == 24, plaintext[1] == 0, plaintext[2] == 0, plaintext[3] == 1,
                plaintext[4] <= 1
            else { return .failure("unexpected handshake message") }
            if plaintext[4] == 1 { keyUpdateOwed = true }
            secret = Self.expandLabel(secret, "traffic upd", length: secret.count, digest: suite.digest)
            guard !secret.isEmpty, installKeys() else { return .failure("key update failed") }
            return .success(nil)
        case 21:
            guard inner == 2 else { return .failure("malformed alert") }
            switch plaintext[1] {
            case 0:
                closed = true
                releaseStaging()
                return .success(nil)
            case 90:
                // user_canceled: close_notify follows (RFC 8446 §6.1).
                return .success(nil)
            case let description:
                return .failure(RecordFailure("peer sent alert \(description)"))
            }
        default:
            return .failure(RecordFailure("unexpected content type \(type)"))
        }
    }

    /// Reads from the socket into staging, behind what is there: `.moved` with some bytes.
    private func receive(_ fd: Int32) -> TransportStatus {
        let buffer: UnsafeMutablePointer<UInt8>
        if let staging {
            buffer = staging
        } else {
            buffer = .allocate(capacity: Self.stagingSize)
            staging = buffer
        }
        if start > 0 {
            if end > start { buffer.update(from: buffer + start, count: end - start) }
            end -= start
            start = 0
        }
        while true {
            let count = Glibc.read(fd, buffer + end, Self.stagingSize - end)
            if count > 0 {
                end += count
                return .moved(count, drained: false)
            }
            if count == 0 { return fail("unexpected eof while reading") }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .blocked(.readable)
            case let code:
                failure = "read: \(String(cString: strerror(code)))"
                releaseStaging()
                return .failed(code: code)
            }
        }
    }

    private func fail(_ reason: String) -> TransportStatus {
        failure = reason
        releaseStaging()
        return .failed(code: EPROTO)
    }

    private func releaseStaging() {
        staging?.deallocate()
        staging = nil
        start = 0
        end = 0
        plainStart = 0
        plainEnd = 0
    }

    /// Derives the key and IV of `secret` (RFC 8446 §7.3) and starts its sequence at 0.
    private func installKeys() -> Bool {
        var key = Self.expandLabel(secret, "key", length: suite.keyLength, digest: suite.digest)
        defer { key.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) } }
        iv = Self.expandLabel(secret, "iv", length: Self.ivLength, digest: suite.digest)
        sequence = 0
        return key.count == suite.keyLength && iv.count == Self.ivLength
            && EVP_DecryptInit_ex(context, nil, nil, key, nil) == 1
    }

    /// HKDF-Expand-Label(secret, label, "", length) for a length no longer than the hash
    /// (RFC 8446 §7.1, RFC 5869 §2.3: one HMAC block). Empty when HMAC fails.
    static func expandLabel(_ secret: [UInt8], _ label: String, length: Int, digest: OpaquePointer?)
        -> [UInt8]
    {
        let fullLabel = Array("tls13 \(label)".utf8)
        let info = [UInt8(length >> 8), UInt8(length & 0xff), UInt8(fullLabel.count)] + fullLabel + [0, 1]
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var outputLength: UInt32 = 0
        guard HMAC(digest, secret, Int32(secret.count), info, info.count, &output, &outputLength) != nil,
            Int(outputLength) >= length
        else { return [] }
        defer { output.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) } }
        return Array(output.prefix(length))
    }
}

/// A reason `TLSRecordReader.open` refused a record.
struct RecordFailure: Error, ExpressibleByStringLiteral {
    let reason: String
    init(_ reason: String) { self.reason = reason }
    init(stringLiteral value: String) { reason = value }
}

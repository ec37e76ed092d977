import EventLoop
import HTTP1
import HTTPCore
import HTTPIO
import ProxyCore

/// Where an exchange's request body bytes go, as the exchange names the destination: the
/// upstream's output, the staging buffer, or a spool file for `request_body: buffer`. Chunk
/// framing is the exchange's (`FramedSink`); this only writes.
struct BodySink: RequestBodySink {
    let io: ExchangeIO
    var destination = BodyDestination.staging

    init(_ io: ExchangeIO) {
        self.io = io
    }

    mutating func write(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        switch destination {
        case .upstream: if let output = io.upstream?.socket.output { io.write(bytes, to: output) }
        case .staging: io.write(bytes, to: io.staging.buffer)
        case .spool: io.spool?.write(bytes)
        case .fileSpool: io.fileSpool?.write(bytes)
        }
    }

    mutating func write(_ bytes: UnsafeRawBufferPointer, sharingWith reader: any SharedBytesReader) -> Bool {
        guard !bytes.isEmpty else { return false }
        switch destination {
        case .upstream:
            guard let output = io.upstream?.socket.output else { return false }
            return io.write(bytes, to: output, sharingWith: reader)
        case .staging: return io.write(bytes, to: io.staging.buffer, sharingWith: reader)
        case .spool, .fileSpool:
            write(bytes)
            return false
        }
    }

    mutating func openLoan(_ input: some ByteSource) -> Bool {
        guard let buffer = input as? EvBuffer else { return false }
        io.loan.open(buffer)
        return true
    }

    mutating func lend(_ chunk: UnsafeRawBufferPointer, at offset: Int) {
        io.loan.lend(chunk, at: offset)
    }

    mutating func settleLoan(used: Int) {
        io.loan.settle(used: used)
    }

    mutating func openSpools(files: Bool) -> Bool {
        let directory = io.worker.config.tempDirectory
        do throws(ProxyError) {
            io.spool = try Spool(directory: directory, writer: io.worker.spoolWriter)
            if files { io.fileSpool = try Spool(directory: directory, writer: io.worker.spoolWriter) }
            return true
        } catch {
            return false
        }
    }

    mutating func flushSpools() -> SpoolFlush {
        let spool = io.spool?.flush() ?? .done
        let fileSpool = io.fileSpool?.flush() ?? .done
        if spool == .failed || fileSpool == .failed { return .failed }
        return spool == .done && fileSpool == .done ? .done : .pending
    }

    var spoolFailed: Bool {
        (io.spool?.error ?? 0) != 0 || (io.fileSpool?.error ?? 0) != 0
    }

    var queued: Int {
        switch destination {
        case .upstream: io.upstream?.socket.output.count ?? 0
        case .staging: io.stagedCount
        case .spool, .fileSpool: 0
        }
    }

    var spoolBacklogged: Bool {
        (io.spool?.backlogged ?? false) || (io.fileSpool?.backlogged ?? false)
    }
}

import HTTPCore
public import MultipartEncoding
import MultipartParsing

extension RulePipeline {
    /// The buffers a pipeline grows (the sniff window, a part head's fields, the encoder's
    /// head buffer), taken from one body's pipeline for the next body's on the same connection.
    public struct Buffers {
        var lookahead: [UInt8] = []
        var headScratch = HeaderFields()
        var encoderScratch: [UInt8] = []
        var boundary: [UInt8] = []
        /// The part records and injected names: the access record shares them until it is
        /// written, after which the next body's pipeline fills them again.
        var records: [PartLogRecord] = []
        var injected: [String] = []
        /// The template values' request object, refilled by the next pipeline (emptied by
        /// `forgetRequest()` once this pipeline is gone).
        var request: TemplateRequest?

        /// Drops what the kept request object holds of its request (call once the pipeline
        /// these buffers came from is gone).
        public mutating func forgetRequest() {
            TemplateRequest.forget(&request)
        }

        /// A fresh boundary in the kept boundary's storage (taken from these buffers).
        public mutating func freshBoundary() -> Boundary {
            var storage: [UInt8] = []
            swap(&storage, &boundary)
            return .random(reusing: storage)
        }

        /// No buffers: a pipeline given them allocates its own.
        public init() {}
    }

    /// The most part records (or injected names) a kept list holds room for.
    static var keptRecords: Int { 64 }

    /// Takes this pipeline's buffers (it must not be used after); the pipeline they are given
    /// to empties them. A buffer that grew past `MultipartParser.Buffers.keptLimit` is not kept.
    public mutating func takeBuffers() -> Buffers {
        let limit = MultipartParser.Buffers.keptLimit
        var buffers = Buffers()
        if lookahead.capacity <= limit { swap(&buffers.lookahead, &lookahead) }
        if headScratch.capacityBytes <= limit { swap(&buffers.headScratch, &headScratch) }
        let scratch = encoder.takeScratch()
        if scratch.capacity <= limit { buffers.encoderScratch = scratch }
        // Shared with the encoder until this pipeline goes, with its body.
        buffers.boundary = encoder.boundary.bytes
        if records.capacity <= Self.keptRecords { swap(&buffers.records, &records) }
        if injected.capacity <= Self.keptRecords { swap(&buffers.injected, &injected) }
        buffers.request = requestValues.request
        return buffers
    }
}

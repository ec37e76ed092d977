import HTTPCore
import MultipartParsing

extension RulePipeline {
    /// The buffers a pipeline grows (the sniff window, a part head's fields, the encoder's
    /// head buffer), taken from one body's pipeline for the next body's on the same connection.
    public struct Buffers {
        var lookahead: [UInt8] = []
        var headScratch = HeaderFields()
        var encoderScratch: [UInt8] = []

        /// No buffers: a pipeline given them allocates its own.
        public init() {}
    }

    /// Takes this pipeline's buffers (it must not be used after); the pipeline they are given
    /// to empties them. A buffer that grew past `MultipartParser.Buffers.keptLimit` is not kept.
    public mutating func takeBuffers() -> Buffers {
        let limit = MultipartParser.Buffers.keptLimit
        var buffers = Buffers()
        if lookahead.capacity <= limit { swap(&buffers.lookahead, &lookahead) }
        if headScratch.capacityBytes <= limit { swap(&buffers.headScratch, &headScratch) }
        let scratch = encoder.takeScratch()
        if scratch.capacity <= limit { buffers.encoderScratch = scratch }
        return buffers
    }
}

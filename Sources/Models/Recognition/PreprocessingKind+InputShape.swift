import DataFiles
import WeightsFormat

// The kinds' parameters are read by the preprocessing types themselves (`ShapeRasterizer(parameters:)`,
// `MotionWindowing(parameters:)`), so the input shape a header makes is known here, not in the format.
extension PreprocessingKind {
    /// The input shape `preprocessing` (of this kind) makes for one example, or why its parameters make none.
    package func inputShape(_ preprocessing: [String: JSONValue]) throws(DataError) -> [Int] {
        try task.preprocessing.init(parameters: preprocessing).inputShape
    }
}

import Tensor

// The errors an app meets come with `import Models`, as the recognizers do: `DataError` (input no model can see,
// a recording too short, a malformed file) and `WeightsFileError` (a weights file that cannot be read). Only these
// two types are re-exported; the rest of DataFiles and WeightsFormat stays behind its own import.
@_exported import struct DataFiles.DataError
@_exported import struct WeightsFormat.DecisionRule
@_exported import enum WeightsFormat.JSONValue
@_exported import struct WeightsFormat.WeightsFileError

/// The models module: what an app links to classify. It holds the shape recognizer (rasterizer, `ShapeClassifier`,
/// `GeometricRecognizer`) and the motion recognizer (recording reader, window features, `MotionClassifier`, cadence
/// recognizer), the retry-with-fallback chain that ties each to its weights, and the shipped weights. The weights
/// file (`ModelFile`, with its limits) is the WeightsFormat module's, the CSV reader DataFiles'; their errors,
/// `DataError` and `WeightsFileError`, come with this module.
/// Built on `Tensor`; it carries no training code.
public enum Models {}

import Tensor

/// The models module: what an app links to classify. It holds the shape recognizer (rasterizer, `ShapeClassifier`,
/// `GeometricRecognizer`) and the motion recognizer (recording reader, window features, `MotionClassifier`, cadence
/// recognizer), the retry-with-fallback chain that ties each to its weights, and the shipped weights. The weights
/// file (`ModelFile`, with its limits) is the WeightsFormat module's, the CSV reader and `DataError` are DataFiles'.
/// Built on `Tensor`; it carries no training code.
public enum Models {}

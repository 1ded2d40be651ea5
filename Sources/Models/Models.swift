import Tensor

/// The models module: what an app links to classify. It holds the weights file (`ModelFile`, with its limits),
/// the CSV readers, the shape recognizer (rasterizer, `ShapeClassifier`, `GeometricRecognizer`) and the motion
/// recognizer (recording reader, window features, `MotionClassifier`, cadence recognizer), and the
/// retry-with-fallback chain that ties each to its weights. Built on `Tensor`; it carries no training code.
public enum Models {}

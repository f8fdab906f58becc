"""interop.import_gaps: the words of an import error that names its GenericOperator nodes."""



def test_the_import_gap_words_are_read_back_as_written():
    """One writer (generic_nodes_message) and one reader (onnx_ops_named, import_gaps) of the words
    an import error names its GenericOperator nodes with; a table row quotes '(ONNX op X)' alone."""
    from interop.import_gaps import generic_nodes_message, import_gaps, onnx_ops_named

    message = generic_nodes_message([("/attn/CastLike", "CastLike"), ("Attention_0", "Attention")])
    assert message == ("Aidge has no native operator for 2 node(s): '/attn/CastLike' (ONNX op CastLike), "
                       "'Attention_0' (ONNX op Attention); they were imported as GenericOperator and cannot run")
    assert import_gaps(message) == [("/attn/CastLike", "CastLike"), ("Attention_0", "Attention")]
    assert onnx_ops_named(message) == ["CastLike", "Attention"]
    assert onnx_ops_named("import: (ONNX op CastLike)") == ["CastLike"] and import_gaps("(ONNX op CastLike)") == []
    assert onnx_ops_named("") == [] and onnx_ops_named(None) == []

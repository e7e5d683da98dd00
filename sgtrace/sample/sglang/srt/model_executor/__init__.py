# Sample written for sgtrace, shaped like SGLang; not SGLang code.

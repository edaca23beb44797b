"""The shared page: one run or many as a stand-alone HTML file that opens offline."""

# Fails unless the file EXAMPLE appears in the document DOC word for word (a code block that shows
# a real, tested source file). -DDOC, -DEXAMPLE.
file(READ ${DOC} doc)
file(READ ${EXAMPLE} example)
string(FIND "${doc}" "${example}" position)
if(position EQUAL -1)
  message(FATAL_ERROR "${DOC} does not show ${EXAMPLE} as it is: copy the file into its code block")
endif()

import { createTheme } from '@mantine/core';

export const theme = createTheme({
  primaryColor: 'indigo',
  defaultRadius: 'md',
  components: {
    // A badge's label is cut with an ellipsis when its container is narrower, and a table column gives way to its
    // neighbours down to nothing: a status read "ACTI...". Badges keep their whole text; tables scroll instead.
    // (A plain object: the theme is built in the server layout, where Badge.extend is not there.)
    Badge: { styles: { root: { minWidth: 'max-content' } } },
  },
});

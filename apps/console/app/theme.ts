import { createTheme } from '@mantine/core';

export const theme = createTheme({
  primaryColor: 'indigo',
  defaultRadius: 'md',
  // Someone whose system asks for reduced motion gets modals, menus and notices without their animations (Mantine
  // ignores the setting unless told). The e2e tests ask for it too: an animation waits on requestAnimationFrame, and a
  // loaded machine's headless Chromium once left a closing modal's overlay in the way for 15 s.
  respectReducedMotion: true,
  components: {
    // A badge's label is cut with an ellipsis when its container is narrower, and a table column gives way to its
    // neighbours down to nothing: a status read "ACTI...". Badges keep their whole text; tables scroll instead.
    // (A plain object: the theme is built in the server layout, where Badge.extend is not there.)
    Badge: { styles: { root: { minWidth: 'max-content' } } },
  },
});
